// Package servertest starts the real executor wiring for tests: on a free loopback port,
// quiet, and shut down when the test ends.
package servertest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/api/openapitest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/stagekind"
)

// Start starts an executor on the in-memory store (see With).
func Start(t testing.TB, register ...func(*stagekind.Registry)) *server.Server {
	t.Helper()
	return With(t, server.Config{}, register...)
}

// started counts the executors With started, for their default names.
var started atomic.Int64

// With starts an executor configured by cfg, on 127.0.0.1:0 unless cfg.Addr says otherwise,
// its every answer checked against docs/openapi.yaml (openapitest) unless cfg.Wrap is set,
// named "servertest-<pid>-<n>" unless cfg.Name says otherwise,
// after register has added custom stage kinds, and shuts it down (asserting a clean
// shutdown) when t ends.
func With(t testing.TB, cfg server.Config, register ...func(*stagekind.Registry)) *server.Server {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Name == "" { // executors of one test process may share a Redis: one name each
		cfg.Name = fmt.Sprintf("servertest-%d-%d", os.Getpid(), started.Add(1))
	}
	if cfg.ShutdownTimeout == 0 { // tests end promptly: running stages are cancelled at once
		cfg.ShutdownTimeout = time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Wrap == nil { // every answer is checked against docs/openapi.yaml
		cfg.Wrap = openapitest.New(t).Wrap
	}
	srv, err := server.New(cfg)
	require.NoError(t, err)
	for _, reg := range register {
		reg(srv.Kinds())
	}
	require.NoError(t, srv.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		assert.NoError(t, srv.Stop(ctx))
	})
	return srv
}
