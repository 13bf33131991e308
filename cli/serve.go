package cli

import (
	"context"
	"io"
	"log/slog"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/server"
)

// ShutdownTimeout bounds a graceful shutdown of `executor serve`.
const ShutdownTimeout = 30 * time.Second

func (a *app) serveCmd() *cobra.Command {
	var addr string
	var workers int
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run an executor (HTTP API on --addr, in-memory store)",
		Long: `Run an executor: the HTTP API on --addr and the orchestrator with --workers task slots,
on the embedded in-memory store. Logs go to stderr as JSON lines, or as text when stderr is a
terminal. SIGINT or SIGTERM shuts down gracefully (at most 30s): running tasks become
INTERRUPTED with their checkpoints intact, and nothing resumes by itself after a restart.`,
		Example: `  executor serve
  executor serve --addr 0.0.0.0:8080 --workers 128
  EXECUTOR_ADDR=127.0.0.1:9090 executor serve`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("addr") {
				if v := a.getenv(EnvAddr); v != "" {
					addr = v
				}
			}
			if !cmd.Flags().Changed("workers") {
				if v := a.getenv(EnvWorkers); v != "" {
					n, err := strconv.Atoi(v)
					if err != nil {
						return usagef("invalid %s %q: want a number", EnvWorkers, v)
					}
					workers = n
				}
			}
			if workers < 1 {
				return usagef("invalid workers %d: want at least 1", workers)
			}
			return a.serve(cmd.Context(), addr, workers)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", DefaultAddr, "listen address (env "+EnvAddr+")")
	cmd.Flags().IntVar(&workers, "workers", 64, "tasks running at once across all plans (env "+EnvWorkers+")")
	return cmd
}

// serve runs an executor until ctx ends, SIGINT or SIGTERM arrives, or the server stops on
// its own, then shuts it down within ShutdownTimeout.
func (a *app) serve(ctx context.Context, addr string, workers int) error {
	logger := newLogger(a.stderr)
	srv := server.New(server.Config{Addr: addr, Workers: workers, Logger: logger})
	if err := srv.Start(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var serveErr error
	select {
	case <-ctx.Done():
		logger.Info("executor shutting down", "reason", context.Cause(ctx).Error(), "timeout", ShutdownTimeout.String())
	case serveErr = <-srv.Done():
		logger.Error("executor stopped serving", "err", serveErr)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		logger.Error("executor shutdown", "err", err)
		if serveErr == nil {
			serveErr = err
		}
	} else {
		logger.Info("executor stopped")
	}
	return serveErr
}

// newLogger logs JSON lines to w, or text when w is a terminal.
func newLogger(w io.Writer) *slog.Logger {
	if terminal(w) != nil {
		return slog.New(slog.NewTextHandler(w, nil))
	}
	return slog.New(slog.NewJSONHandler(w, nil))
}
