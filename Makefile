# The one test command (README, .ci/run): every test, with the race detector.
GO ?= go

.PHONY: test build vet deps

# Tests start their own redis-server on free ports; install it when missing (as root).
deps:
	@command -v redis-server >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq redis-server; \
	  else echo "redis-server missing: run 'sudo apt-get install -y redis-server'" >&2; exit 1; fi; }

test: deps
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

build:
	$(GO) build -o bin/executor ./cmd/executor

vet:
	$(GO) vet ./...
