package cli

import (
	"context"
	"io"
	"log/slog"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/server"
)

// ShutdownTimeout bounds a graceful shutdown of `executor serve`.
const ShutdownTimeout = 30 * time.Second

func (a *app) serveCmd() *cobra.Command {
	var cfg server.Config
	var degradedNewPlans string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run an executor (HTTP API on --addr; in-memory store, or Redis with --redis)",
		Long: `Run an executor: the HTTP API on --addr and the orchestrator with --workers task slots.
Without --redis it runs on the embedded in-memory store; with --redis every plan, task and
checkpoint is written through to Redis, tenant leases are Redis leases (--lease-ttl), and a
restarted executor answers every query from Redis. Logs go to stderr as JSON lines, or as text
when stderr is a terminal. SIGINT or SIGTERM shuts down gracefully (at most 30s): running tasks
become INTERRUPTED with their checkpoints intact, and nothing resumes by itself after a restart.`,
		Example: `  executor serve
  executor serve --addr 0.0.0.0:8080 --workers 128
  executor serve --redis redis://127.0.0.1:6379/0 --lease-ttl 30s
  EXECUTOR_ADDR=127.0.0.1:9090 executor serve`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for flag, env := range map[string]string{
				"addr": EnvAddr, "workers": EnvWorkers, "redis": EnvRedis, "prefix": EnvPrefix, "lease-ttl": EnvLeaseTTL,
				"degraded-new-plans": EnvDegradedNewPlans, "events-stream": EnvEventsStream,
			} {
				v := a.getenv(env)
				if cmd.Flags().Changed(flag) || v == "" {
					continue
				}
				if err := cmd.Flags().Set(flag, v); err != nil {
					return usagef("invalid %s %q: %v", env, v, err)
				}
			}
			if cfg.Workers < 1 {
				return usagef("invalid workers %d: want at least 1", cfg.Workers)
			}
			switch degradedNewPlans {
			case "accept":
			case "reject":
				cfg.RejectNewPlansWhileDegraded = true
			default:
				return usagef("invalid --degraded-new-plans %q: want accept or reject", degradedNewPlans)
			}
			if cfg.EventStream && cfg.RedisURL == "" {
				return usagef("--events-stream needs --redis: the stream is a Redis key")
			}
			if cfg.LeaseTTL < 3*time.Second/10 {
				return usagef("invalid lease TTL %s: want at least 300ms", cfg.LeaseTTL)
			}
			return a.serve(cmd.Context(), cfg)
		},
	}
	cmd.Flags().StringVar(&cfg.Addr, "addr", DefaultAddr, "listen address (env "+EnvAddr+")")
	cmd.Flags().IntVar(&cfg.Workers, "workers", 64, "tasks running at once across all plans (env "+EnvWorkers+")")
	cmd.Flags().StringVar(&cfg.RedisURL, "redis", "", "Redis URL, e.g. redis://127.0.0.1:6379/0; empty: the in-memory store (env "+EnvRedis+")")
	cmd.Flags().StringVar(&cfg.Prefix, "prefix", "executor:", "Redis key prefix (env "+EnvPrefix+")")
	cmd.Flags().DurationVar(&cfg.LeaseTTL, "lease-ttl", 60*time.Second, "tenant lease TTL, refreshed every TTL/3 (env "+EnvLeaseTTL+")")
	cmd.Flags().StringVar(&degradedNewPlans, "degraded-new-plans", "accept",
		"while Redis is away: accept new plans (run them on memory) or reject them with 503 (env "+EnvDegradedNewPlans+")")
	cmd.Flags().BoolVar(&cfg.EventStream, "events-stream", false,
		"also write every event to the Redis stream <prefix>events, capped at about 10,000 entries, for external subscribers (env "+EnvEventsStream+")")
	return cmd
}

// serve runs an executor until ctx ends, SIGINT or SIGTERM arrives, or the server stops on
// its own, then shuts it down within ShutdownTimeout.
func (a *app) serve(ctx context.Context, cfg server.Config) error {
	logger := newLogger(a.stderr)
	cfg.Logger = logger
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
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
