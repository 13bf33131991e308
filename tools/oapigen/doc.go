// Package oapigen checks that docs/openapi.yaml is usable by oapi-codegen, the common Go
// generator: a client (client.cfg.yaml, into execclient/) and a net/http strict server
// (server.cfg.yaml, into execserver/) are generated from it, must build and pass go vet, and
// the generated client drives the real executor (oapigen_test.go): a plan, a dry run told
// apart from a plan by the `kind` discriminator, the plan read back, and the event stream.
//
// It is a module of its own, so that oapi-codegen and its dependencies (pinned by go.mod's
// tool directive) stay out of the executor's go.mod; it requires the executor from this
// checkout (replace ../..). The generated packages are not committed: `make openapi-gen` (part
// of `make test`) regenerates them from the current spec, then vets, builds and tests this
// module; by hand:
//
//	go generate ./ && go vet ./... && go test -race ./...
//
// Run go mod tidy here only once they are generated (it would drop oapi-codegen's runtime,
// which only the generated code imports).
package oapigen

//go:generate go tool oapi-codegen -config client.cfg.yaml ../../docs/openapi.yaml
//go:generate go tool oapi-codegen -config server.cfg.yaml ../../docs/openapi.yaml
