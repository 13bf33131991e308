// Command custom-kind is `executor` with one more stage kind, cache-purge: the whole CLI
// (serve and every other command, with their flags, environment variables, guards, signals
// and logs), built from a few lines of Go.
//
//	go run ./examples/custom-kind serve
//	go run ./cmd/executor submit -f examples/custom-kind/plan.yaml --wait
//
// Sharing a Redis with stock executors, it advertises cache-purge; they accept plans that use
// it and leave their tasks to it.
package main

import (
	"context"
	"encoding/json"
	"os"
	"os/signal"
	"syscall"

	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/stagekind"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr, cli.WithKinds(func(reg *stagekind.Registry) error {
		return reg.Register("cache-purge", stage.HandlerFunc(purge))
	}))
	stop()
	os.Exit(code)
}

// purge is the cache-purge kind: it purges params.prefix of the tenant's cache (here it only
// says what it purged; a real one calls the cache's API, passing req.IdempotencyKey() and
// req.FenceToken() on).
func purge(ctx context.Context, req stage.Request) (json.RawMessage, error) {
	prefix, _ := req.Params["prefix"].(string)
	if prefix == "" {
		return nil, stage.Permanent(&stage.FieldError{Field: "prefix", Reason: "is required", Err: stagekind.ErrInvalidParams})
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return json.Marshal(map[string]string{"purged": req.TenantID + ":" + prefix})
}
