# The one test command (README, .ci/run): every test, with the race detector.
GO ?= go

.PHONY: test build vet

test:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

build:
	$(GO) build -o bin/executor ./cmd/executor

vet:
	$(GO) vet ./...
