# The one test command (README, .ci/run): every test, with the race detector, then the
# chaos suite's short run.
GO ?= go

.PHONY: test build deps bench screenshots

# Tests start their own redis-server and Prometheus on free ports and drive the console in
# headless Chromium; install what is missing (as root), without recommended packages, quietly: apt's
# output goes to $(APT_LOG) and is shown only when the install fails.
APT_LOG ?= /tmp/executor-apt.log
APT_INSTALL = DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends
deps:
	@command -v redis-server >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then echo "installing redis-server (log: $(APT_LOG))"; \
	    { apt-get update -qq && $(APT_INSTALL) redis-server; } >$(APT_LOG) 2>&1 || { cat $(APT_LOG) >&2; exit 1; }; \
	  else echo "redis-server missing: run 'sudo apt-get install -y --no-install-recommends redis-server'" >&2; exit 1; fi; }
	@command -v prometheus >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then echo "installing prometheus (log: $(APT_LOG))"; \
	    { apt-get update -qq && $(APT_INSTALL) prometheus; } >$(APT_LOG) 2>&1 || { cat $(APT_LOG) >&2; exit 1; }; \
	  else echo "prometheus missing: run 'sudo apt-get install -y --no-install-recommends prometheus'" >&2; exit 1; fi; }
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then echo "installing chromium (log: $(APT_LOG))"; \
	    { apt-get update -qq && $(APT_INSTALL) chromium; } >$(APT_LOG) 2>&1 || { cat $(APT_LOG) >&2; exit 1; }; \
	  else echo "chromium missing: run 'sudo apt-get install -y --no-install-recommends chromium'" >&2; exit 1; fi; }

# After the tests, each fuzz target runs briefly (one per invocation: go test -fuzz takes one
# target of one package), minimizing new inputs for 100 runs at most so that the few seconds go
# to fuzzing; longer runs, the corpus and crashers: docs/testing.md. The budgets are counts of
# executions, not durations: Go 1.26's coordinator can fail a duration-bounded run at its
# deadline with a bare "context deadline exceeded" and no failing input (golang/go#75804,
# fixed in Go 1.27), which a count cannot race.
test: deps lint openapi-gen
	$(GO) test -race -count=1 ./...
	$(GO) test -run='^$$' -fuzz='^FuzzSubmitBody$$' -fuzztime=4000x -fuzzminimizetime=100x ./api
	$(GO) test -run='^$$' -fuzz='^FuzzIDs$$' -fuzztime=40000x -fuzzminimizetime=100x ./app
	$(GO) test -tags chaos -race -count=1 -timeout 20m -run TestChaos -v ./chaos/

# go vet, staticcheck and deadcode (both pinned in go.mod's tool block: go tool …), the chaos
# suite's build tag included; deadcode -test lists functions no program or test reaches, and any
# makes the target fail.
.PHONY: lint
lint:
	$(GO) vet ./...
	$(GO) vet -tags chaos ./chaos/
	$(GO) tool staticcheck ./...
	$(GO) tool staticcheck -tags chaos ./chaos/
	@out="$$($(GO) tool deadcode -test ./...)" || exit 1; \
	  if [ -n "$$out" ]; then echo "$$out"; echo "deadcode: the functions above are unreachable: remove them" >&2; exit 1; fi

# oapi-codegen (pinned by tools/oapigen/go.mod's tool directive) generates a client and a
# net/http strict server from docs/openapi.yaml into tools/oapigen/execclient/ and execserver/
# (git-ignored: generated afresh from the current spec, never stale); both must pass go vet,
# staticcheck (the main module's, go tool -n builds it) and build, and the generated client
# drives the real executor (tools/oapigen/oapigen_test.go: a plan, a dry run told apart by
# `kind`, the event stream). A module of its own, so that oapi-codegen's dependencies stay out
# of go.mod; being outside ./..., lint does not see it: this target vets it.
.PHONY: openapi-gen
OAPIGEN = tools/oapigen
openapi-gen:
	$(GO) -C $(OAPIGEN) generate .
	$(GO) -C $(OAPIGEN) vet ./...
	@sc="$$($(GO) tool -n staticcheck)" && echo "cd $(OAPIGEN) && staticcheck ./..." && cd $(OAPIGEN) && "$$sc" ./...
	$(GO) -C $(OAPIGEN) build ./...
	$(GO) -C $(OAPIGEN) test -race -count=1 ./...

# The version stamped into the binaries (`executor version`, `executor --version`): git
# describe (the last tag, commits since, the short commit, -dirty for uncommitted changes),
# or VERSION=... when given (the Dockerfile passes it: its build context has no .git). Empty
# (no git): the binary reports its build info's version, "(devel)". -buildvcs=auto records
# the commit too wherever git can read it, whatever GOFLAGS says.
ifeq ($(origin VERSION),undefined)
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null)
endif
VERSION_LDFLAGS = -X github.com/executor-dev/executor/cli.stampedVersion=$(VERSION)
BUILD_FLAGS = -buildvcs=auto -trimpath

# bin/executor for this machine, static (CGO_ENABLED=0: no libc needed, it runs in a scratch
# or distroless image), its version stamped. docs/install.md.
build:
	CGO_ENABLED=0 $(GO) build $(BUILD_FLAGS) -ldflags '$(VERSION_LDFLAGS)' -o bin/executor ./cmd/executor

# The release: static, stripped (-s -w) binaries for each of RELEASE_PLATFORMS in dist/
# (emptied first), named executor-<version>-<os>-<arch>, and dist/SHA256SUMS, which
# `cd dist && sha256sum -c SHA256SUMS` checks. Refused without a version (no git: pass VERSION=...).
.PHONY: release
RELEASE_PLATFORMS ?= linux/amd64 linux/arm64
release:
	@test -n "$(VERSION)" || { echo "release: no version: git describe found no commit; pass VERSION=..." >&2; exit 1; }
	rm -rf dist
	mkdir -p dist
	@for p in $(RELEASE_PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; out=dist/executor-$(VERSION)-$$os-$$arch; \
	  echo "building $$out"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build $(BUILD_FLAGS) -ldflags '-s -w $(VERSION_LDFLAGS)' -o $$out ./cmd/executor || exit 1; \
	done
	cd dist && sha256sum executor-* >SHA256SUMS
	@cat dist/SHA256SUMS

# The container image (Dockerfile: make build in golang, the binary alone in distroless),
# tagged executor:<version> and executor:latest. Needs docker (and its daemon); not part of
# `make test`. The version is passed as a build argument: the build context leaves .git out.
.PHONY: docker
IMAGE ?= executor
docker:
	@command -v docker >/dev/null 2>&1 || { echo "docker not found: install docker to build the image (the binary alone: make build)" >&2; exit 1; }
	docker build --build-arg VERSION=$(VERSION) -t $(IMAGE):$(or $(VERSION),dev) -t $(IMAGE):latest .

# The Go benchmarks of the hot paths (docs/performance.md); `executor bench` measures a whole
# executor. Not part of `make test`: speed is measured, never asserted.
bench: deps
	$(GO) test -p 1 -run '^$$' -bench . -benchtime 1s ./infra/redisrepo/ ./orchestrator/ ./app/ ./infra/memrepo/

# The console's screenshots in docs/, taken by its browser tests (the 100,000-tenant plan page too).
screenshots: deps
	CONSOLE_SCREENSHOTS=$(CURDIR)/docs $(GO) test -count=1 -run 'TestConsoleInChromium|TestConsoleAtScaleInChromium' ./server/

# The memory soak (docs/performance.md, "Bounded memory"): 200,000 tasks through one executor
# on Redis, heap and RSS reported and required flat within 20 %. A few minutes: not in make test.
.PHONY: soak
soak: deps
	$(GO) test -tags soak -count=1 -timeout 30m -run TestSoakMemoryStaysFlat -v ./bench/

# The chaos suite (chaos/README.md): three executors on a real redis-server, faults injected
# one at a time, the invariants checked from the recorded history; this one runs
# CHAOS_DURATION (5 minutes by default). CHAOS_SEED replays a run's choices, CHAOS_FAULTS
# restricts the faults, CHAOS_KEEP=1 keeps the logs of a green run. Behind the build tag
# "chaos" (it builds and runs executor processes for a minute or two): `make test` runs its
# short run (25 s of faults) after the other tests.
.PHONY: chaos
CHAOS_DURATION ?= 5m
chaos: deps
	CHAOS_DURATION=$(CHAOS_DURATION) $(GO) test -tags chaos -race -count=1 -timeout 45m -run TestChaos -v ./chaos/
