# The executor's container image: `make docker`, or
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) -t executor .
# (docs/install.md). The build stage runs `make build`, the same static bin/executor as on a
# workstation; the final image holds that binary alone, on distroless (CA certificates, tzdata,
# /etc/passwd with the nonroot user; no shell, no package manager).

# GO_VERSION: at least go.mod's go line (1.26.8): the golang image sets GOTOOLCHAIN=local, so it
# downloads no newer toolchain; pin it (--build-arg GO_VERSION=1.26.8) for a reproducible build.
ARG GO_VERSION=1.26

FROM golang:${GO_VERSION} AS build
WORKDIR /src
# The modules first, in their own layer: it stays cached while only the code changes. (No
# RUN --mount cache: the file builds with the legacy builder too, docker without buildx.)
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# .dockerignore leaves .git out of the context, so `make build` cannot run git describe: the
# version comes in as this argument (make docker passes it). Unset: the binary says "(devel)".
ARG VERSION=
RUN make build VERSION="${VERSION}" && ./bin/executor version

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/bin/executor /executor
# The nonroot user of distroless (65532:65532); mount secrets (--secrets-dir, --tokens-file)
# readable by it.
USER nonroot:nonroot
EXPOSE 8080
# serve drains on SIGTERM for --shutdown-timeout (30 s by default) plus 10 s: stop the container
# with more than docker's default 10 s (docker stop -t 45, Kubernetes'
# terminationGracePeriodSeconds: 45).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/executor"]
# In-memory store unless EXECUTOR_REDIS_URL is set. Listening beyond loopback, serve refuses to
# start without bearer tokens: pass EXECUTOR_TOKENS (or EXECUTOR_TOKENS_FILE, a mounted file).
CMD ["serve", "--addr", "0.0.0.0:8080"]
