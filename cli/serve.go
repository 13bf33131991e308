package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/auth"
	"github.com/executor-dev/executor/infra/members"
	"github.com/executor-dev/executor/infra/redisconn"
	"github.com/executor-dev/executor/notify"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/stagekind"
)

// serveLong is serve's help.
const serveLong = `Run an executor: the HTTP API on --addr and the orchestrator with --workers task slots.
Without --redis it runs on the embedded in-memory store, which forgets an ended plan
--retention after its end as Redis expires it; with --redis every plan, task and checkpoint is
written through to Redis, tenant leases are Redis leases (--lease-ttl), and a restarted
executor answers every query from Redis. Logs go to stderr as JSON lines, or as text when
stderr is a terminal.

With --redis, an executor that has not reached Redis once since it started is not ready
(/readyz 503) and refuses new plans and commands on what it cannot see (503 with Retry-After):
it cannot tell which tenants other executors run. --topology says what a later outage does:
shared (the default: several executors share the Redis, the only source of truth; a run stops
before its tenant lease could expire, never starts a stage it could not checkpoint in Redis,
and requests answer 503 naming why) or alone (the only executor on its Redis: it keeps
running on memory, journals and writes everything back when Redis answers).

Auth: bearer tokens with role read or operate, from ` + EnvTokens + ` ("role:name:secret,...";
the name is who holds it, the actor of what it does; "role:secret": anonymous) and
--tokens-file (one per line). Once any token is configured, every /v1 route, the
console and /metrics need one. Without tokens serve listens on a loopback address only, unless
--insecure.

SIGINT or SIGTERM shuts down gracefully: new plans are refused with 503, running tasks pause at
their next stage boundary; after --shutdown-timeout their stages are cancelled. A second SIGINT
or SIGTERM cancels them at once. Tasks not done become INTERRUPTED with their checkpoints
intact, and nothing resumes by itself after a restart.`

// serveExample is serve's examples.
const serveExample = `  executor serve
  EXECUTOR_TOKENS=operate:$(openssl rand -hex 16) executor serve --addr 0.0.0.0:8080 --workers 128
  executor serve --redis redis://127.0.0.1:6379/0 --lease-ttl 30s
  executor serve --redis 'redis://10.0.0.1:7000?addr=10.0.0.2:7000&addr=10.0.0.3:7000'   # Redis Cluster
  executor serve --redis redis://10.0.0.1:7000 --redis-cluster                          # Redis Cluster, one seed
  executor serve --redis 'redis+sentinel://:secret@10.0.0.1:26379,10.0.0.2:26379,10.0.0.3:26379/mymaster/0'
  executor serve --http-allow deploy.internal --http-allow 10.20.0.0/16
  EXECUTOR_ADDR=127.0.0.1:9090 executor serve`

// serve's own defaults and bounds (the executor's defaults are server's: server.Default*).
const (
	defaultLogLevel = "info"
	minLeaseTTL     = 300 * time.Millisecond
	minRetention    = time.Minute
)

// serveOptions are serve's flags: the executor's configuration, and what becomes part of it
// once checked (serveConfig).
type serveOptions struct {
	cfg        server.Config
	httpAllow  []string
	execAllow  []string
	promAllow  []string
	topology   string
	tokensFile string
	logLevel   string
	cacheTasks int
	insecure   bool
}

func (a *invocation) serveCmd() *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:     "serve",
		Short:   "Run an executor: the HTTP API on --addr, on memory or Redis",
		Long:    serveLong,
		Example: serveExample,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.serveEnvFlags(cmd); err != nil {
				return err
			}
			cfg, level, err := a.serveConfig(o)
			if err != nil {
				return err
			}
			return a.serve(cmd.Context(), cfg, level)
		},
	}
	cmd.SetUsageFunc(serveUsage)
	serveFlags(cmd, &o)
	return cmd
}

// serveFlags defines serve's flags on cmd, into o.
func serveFlags(cmd *cobra.Command, o *serveOptions) {
	f, cfg := cmd.Flags(), &o.cfg
	f.StringVar(&cfg.Addr, "addr", DefaultAddr, "listen address (env "+EnvAddr+")")
	f.StringVar(&cfg.Name, "name", "", "this executor's name among the executors sharing its Redis, in every log line; letters, digits, '.', '_', '-' (default <hostname>-<pid>; env "+EnvName+")")
	f.IntVar(&cfg.Workers, "workers", server.DefaultWorkers, "tasks running at once across all plans (env "+EnvWorkers+")")
	f.StringVar(&cfg.RedisURL, "redis", "", "Redis URL: one node redis://[user:pass@]host:6379/0 (rediss:// for TLS); a Cluster redis://host1:7000?addr=host2:7000&addr=host3:7000 (or one node with --redis-cluster); Sentinel redis+sentinel://[user:pass@]s1:26379,s2:26379/<master>[/db][?sentinel_password=...]; empty: the in-memory store (env "+EnvRedis+")")
	f.BoolVar(&cfg.RedisCluster, "redis-cluster", false, "--redis names one node of a Redis Cluster (a seed: the client learns the others from it) (env "+EnvRedisCluster+")")
	f.StringVar(&cfg.Prefix, "prefix", server.DefaultPrefix, "Redis key prefix (env "+EnvPrefix+")")
	f.DurationVar(&cfg.LeaseTTL, "lease-ttl", server.DefaultLeaseTTL, "tenant lease TTL, refreshed every TTL/3 (env "+EnvLeaseTTL+")")
	f.DurationVar(&cfg.NotifyBackoff, "notify-backoff", notify.DefaultBackoff, "wait after a notification's failed delivery, doubled after each, at most 5m (env "+EnvNotifyBackoff+")")
	f.DurationVar(&cfg.Retention, "retention", server.DefaultRetention,
		"how long the store, memory or Redis, keeps an ended plan with its tasks, checkpoints, transcripts and tenant indexes, from its end, before it forgets them; nothing of an active plan goes (env "+EnvRetention+")")
	f.IntVar(&o.cacheTasks, "cache-tasks", server.DefaultCacheTasks,
		"with --redis: how many tasks that Redis holds (ended, or only read) the memory mirror caches, each with its checkpoint, besides the tasks and plans this executor runs or accepted and what it journaled while Redis is away (about 4.5 KB of heap each); 0: no cache (env "+EnvCacheTasks+")")
	f.StringVar(&o.topology, "topology", string(server.TopologyShared),
		"with --redis: shared (several executors share the Redis, the only source of truth: while Redis is away runs stop before their leases could expire and requests answer 503) or alone (this executor is the only one on its Redis: while Redis is away it runs on memory and writes back later; refused when another executor is alive there) (env "+EnvTopology+")")
	f.BoolVar(&cfg.EventStream, "events-stream", false,
		"deprecated, no effect: with --redis every executor writes its events to the Redis stream <prefix>events and serves GET /v1/events from it (env "+EnvEventsStream+")")
	f.StringVar(&o.tokensFile, "tokens-file", "", "file of bearer tokens, one role:name:secret (or role:secret) per line, role read or operate (env "+EnvTokensFile+"; tokens also come from "+EnvTokens+")")
	f.BoolVar(&o.insecure, "insecure", false, "serve without tokens on a non-loopback address (env "+EnvInsecure+")")
	f.StringSliceVar(&o.httpAllow, "http-allow", nil,
		"hosts and CIDRs the http stage kind may reach, repeatable or comma-separated; empty: any but link-local and cloud metadata, which are denied unless listed (env "+EnvHTTPAllow+")")
	f.StringSliceVar(&o.promAllow, "prometheus-allow", nil,
		"hosts and CIDRs the prometheus stage kind and ring analyses may query, with --http-allow's rules; empty: any but link-local and cloud metadata (env "+EnvPrometheusAllow+")")
	f.StringSliceVar(&o.execAllow, "exec-allow", nil,
		"commands the exec stage kind may run: absolute paths of files, or of directories with a trailing / (every command under them), repeatable or comma-separated; empty: the exec kind is disabled (env "+EnvExecAllow+")")
	f.StringSliceVar(&cfg.ExecEnv, "exec-env", nil,
		"names of this executor's environment variables passed to exec stages' commands besides PATH and HOME, repeatable or comma-separated (env "+EnvExecEnv+")")
	f.StringVar(&cfg.SecretsDir, "secrets-dir", "",
		"directory of the secrets stage params read with {{secret \"name\"}}, one file each (a mounted Kubernetes Secret, systemd credentials); their values are never stored, answered nor logged (env "+EnvSecretsDir+")")
	f.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", server.DefaultShutdownTimeout,
		"on SIGTERM/SIGINT, how long running tasks may take to reach their next stage boundary before their stages are cancelled (env "+EnvShutdownTimeout+")")
	f.IntVar(&cfg.Limits.MaxTenants, "max-tenants", app.DefaultMaxTenants, "most tenants in one plan (env "+EnvMaxTenants+")")
	f.IntVar(&cfg.Limits.MaxStages, "max-stages", app.DefaultMaxStages, "most stages in one plan (env "+EnvMaxStages+")")
	f.IntVar(&cfg.Limits.MaxParamsBytes, "max-params-bytes", app.DefaultMaxParamsBytes,
		"largest params, as JSON: the stages' together, and each tenant's (env "+EnvMaxParamsBytes+")")
	f.IntVar(&cfg.Limits.MaxQueued, "max-queued", app.DefaultMaxQueued,
		"most tasks waiting to start across all plans; more is refused with 429 and Retry-After (env "+EnvMaxQueued+")")
	f.Int64Var(&cfg.MaxBodyBytes, "max-body-bytes", api.DefaultMaxBodyBytes, "largest request body (env "+EnvMaxBodyBytes+")")
	f.IntVar(&cfg.Limits.MaxLabels, "max-labels", app.DefaultMaxLabels, "most labels of one plan (env "+EnvMaxLabels+")")
	f.IntVar(&cfg.Limits.MaxLabelValueBytes, "max-label-value-bytes", app.DefaultMaxLabelValueBytes,
		"largest label value, in bytes (env "+EnvMaxLabelValueBytes+")")
	f.Int64Var(&cfg.Limits.MaxRenderSteps, "max-render-steps", app.DefaultMaxRenderSteps,
		"most {{range}} iterations of every tenant's params rendered together at a submission (env "+EnvMaxRenderSteps+")")
	f.Int64Var(&cfg.Limits.MaxRenderBytes, "max-render-bytes", app.DefaultMaxRenderBytes,
		"most bytes every tenant's params write, and the template functions make, rendered together at a submission (env "+EnvMaxRenderBytes+")")
	f.IntVar(&cfg.MaxOutputBytes, "max-output-bytes", server.DefaultMaxOutputBytes,
		"largest output of one stage, as JSON; a larger one fails the stage permanently (env "+EnvMaxOutputBytes+")")
	f.IntVar(&cfg.MaxTaskOutputBytes, "max-task-output-bytes", server.DefaultMaxTaskOutputBytes,
		"largest outputs of all a task's stages together, as its checkpoint keeps them (env "+EnvMaxTaskOutputBytes+")")
	f.IntVar(&cfg.MaxEventStreams, "max-event-streams", api.DefaultMaxEventStreams,
		"most GET /v1/events streams open at once; more is refused with 429 (env "+EnvMaxEventStreams+")")
	f.IntVar(&cfg.MaxEventStreamsPerClient, "max-event-streams-per-client", api.DefaultMaxEventStreamsPerClient,
		"most GET /v1/events streams one client address holds open (env "+EnvMaxEventStreamsPerClient+")")
	f.StringVar(&o.logLevel, "log-level", defaultLogLevel, "lowest level logged: debug, info, warn or error (env "+EnvLogLevel+")")
}

// serveEnvFlags sets each serve flag not given on the command line from its environment
// variable, if set (serveEnv).
func (a *invocation) serveEnvFlags(cmd *cobra.Command) error {
	for flag, env := range serveEnv {
		v := a.getenv(env)
		if cmd.Flags().Changed(flag) || v == "" {
			continue
		}
		if err := cmd.Flags().Set(flag, v); err != nil {
			return usagef("invalid %s %q: %v", env, v, err)
		}
	}
	return nil
}

// serveConfig checks o and returns the executor's configuration and the lowest level logged,
// or a usage error naming the flag at fault.
func (a *invocation) serveConfig(o serveOptions) (server.Config, slog.Level, error) {
	cfg := o.cfg
	if err := o.check(); err != nil {
		return cfg, 0, err
	}
	cfg.Topology, _ = server.ParseTopology(o.topology) // checked by check
	cfg.CacheTasks = o.cacheTasks
	if o.cacheTasks == 0 {
		cfg.CacheTasks = -1 // no cache (0 in the config means the default)
	}
	allow, err := stagekind.ParseAllowList(o.httpAllow)
	if err != nil {
		return cfg, 0, usagef("invalid --http-allow: %v", err)
	}
	cfg.HTTPAllow = allow
	if cfg.PrometheusAllow, err = stagekind.ParseAllowList(o.promAllow); err != nil {
		return cfg, 0, usagef("invalid --prometheus-allow: %v", err)
	}
	if cfg.ExecAllow, err = stagekind.ParseExecAllow(o.execAllow); err != nil {
		return cfg, 0, usagef("invalid --exec-allow: %v", err)
	}
	if cfg.Tokens, err = a.serveTokens(o.tokensFile); err != nil {
		return cfg, 0, err
	}
	if len(cfg.Tokens) == 0 && !o.insecure && !loopback(cfg.Addr) {
		return cfg, 0, usagef("refusing to serve on %s without tokens: anyone who reaches it could deploy; set %s or --tokens-file, listen on 127.0.0.1, or pass --insecure",
			cfg.Addr, EnvTokens)
	}
	level, err := parseLogLevel(o.logLevel)
	return cfg, level, err
}

// check checks the flags that need no parsing beyond their type's.
func (o serveOptions) check() error {
	cfg := o.cfg
	if cfg.Name != "" {
		if err := server.CheckName(cfg.Name); err != nil {
			return usagef("invalid --name %q: want letters, digits, '.', '_' and '-', starting with a letter or digit, at most 128 characters (it becomes part of Redis keys)", cfg.Name)
		}
	}
	if cfg.Workers < 1 {
		return usagef("invalid workers %d: want at least 1", cfg.Workers)
	}
	if _, err := server.ParseTopology(o.topology); err != nil {
		return usagef("invalid --topology %q: want shared (several executors on one Redis, the default) or alone (the only executor on its Redis)", o.topology)
	}
	if cfg.LeaseTTL < minLeaseTTL {
		return usagef("invalid lease TTL %s: want at least %s", cfg.LeaseTTL, minLeaseTTL)
	}
	if o.cacheTasks < 0 {
		return usagef("invalid --cache-tasks %d: want 0 or more", o.cacheTasks)
	}
	if cfg.Retention < minRetention {
		return usagef("invalid --retention %s: want at least 1m", cfg.Retention)
	}
	if cfg.ShutdownTimeout <= 0 {
		return usagef("invalid --shutdown-timeout %s: want more than 0", cfg.ShutdownTimeout)
	}
	for name, v := range map[string]int{"--max-tenants": cfg.Limits.MaxTenants, "--max-stages": cfg.Limits.MaxStages,
		"--max-params-bytes": cfg.Limits.MaxParamsBytes, "--max-queued": cfg.Limits.MaxQueued, "--max-body-bytes": int(cfg.MaxBodyBytes),
		"--max-event-streams": cfg.MaxEventStreams, "--max-output-bytes": cfg.MaxOutputBytes, "--max-task-output-bytes": cfg.MaxTaskOutputBytes, "--max-event-streams-per-client": cfg.MaxEventStreamsPerClient,
		"--max-labels": cfg.Limits.MaxLabels, "--max-label-value-bytes": cfg.Limits.MaxLabelValueBytes,
		"--max-render-steps": int(min(cfg.Limits.MaxRenderSteps, 1<<31)), "--max-render-bytes": int(min(cfg.Limits.MaxRenderBytes, 1<<31))} {
		if v < 1 {
			return usagef("invalid %s %d: want at least 1", name, v)
		}
	}
	return nil
}

// serveUsage prints serve's usage: its own flags only. The root's persistent flags (--server,
// --token, -o) are the client commands'; serve accepts and ignores them.
func serveUsage(c *cobra.Command) error {
	_, err := fmt.Fprintf(c.OutOrStderr(), "Usage:\n  %s\n\nExamples:\n%s\n\nFlags:\n%s\n",
		c.UseLine(), c.Example, strings.TrimRight(c.LocalFlags().FlagUsages(), " \n"))
	return err
}

// parseLogLevel reads --log-level.
func parseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, usagef("invalid --log-level %q: want debug, info, warn or error", s)
}

// shutdownGrace is how long, after --shutdown-timeout, the cancelled runs get to write their
// ends and release their leases before serve exits anyway.
const shutdownGrace = 10 * time.Second

// serveEnv names the environment variable of each serve flag; the flag beats its variable.
var serveEnv = map[string]string{
	"addr": EnvAddr, "name": EnvName, "workers": EnvWorkers, "redis": EnvRedis, "redis-cluster": EnvRedisCluster, "prefix": EnvPrefix, "lease-ttl": EnvLeaseTTL, "retention": EnvRetention, "cache-tasks": EnvCacheTasks,
	"topology": EnvTopology, "events-stream": EnvEventsStream,
	"tokens-file": EnvTokensFile, "insecure": EnvInsecure, "http-allow": EnvHTTPAllow, "exec-allow": EnvExecAllow, "prometheus-allow": EnvPrometheusAllow, "exec-env": EnvExecEnv, "secrets-dir": EnvSecretsDir,
	"shutdown-timeout": EnvShutdownTimeout, "max-tenants": EnvMaxTenants, "max-stages": EnvMaxStages,
	"max-params-bytes": EnvMaxParamsBytes, "max-queued": EnvMaxQueued, "max-body-bytes": EnvMaxBodyBytes,
	"max-output-bytes": EnvMaxOutputBytes, "max-task-output-bytes": EnvMaxTaskOutputBytes,
	"max-event-streams": EnvMaxEventStreams, "max-event-streams-per-client": EnvMaxEventStreamsPerClient,
	"max-labels": EnvMaxLabels, "max-label-value-bytes": EnvMaxLabelValueBytes,
	"max-render-steps": EnvMaxRenderSteps, "max-render-bytes": EnvMaxRenderBytes,
	"log-level": EnvLogLevel, "notify-backoff": EnvNotifyBackoff,
}

// serveTokens reads the tokens of EXECUTOR_TOKENS and of the tokens file, if any.
func (a *invocation) serveTokens(file string) ([]auth.Token, error) {
	tokens, err := auth.ParseList(a.getenv(EnvTokens))
	if err != nil {
		return nil, usagef("invalid %s: %v", EnvTokens, err)
	}
	if file == "" {
		if err := auth.Distinct(tokens); err != nil {
			return nil, usagef("invalid %s: %v", EnvTokens, err)
		}
		return tokens, nil
	}
	fh, err := os.Open(file)
	if err != nil {
		return nil, usagef("invalid --tokens-file: %v", err)
	}
	defer fh.Close()
	more, err := auth.ReadFile(fh)
	if err != nil {
		return nil, usagef("invalid --tokens-file %s: %v", file, err)
	}
	tokens = append(tokens, more...)
	if err := auth.Distinct(tokens); err != nil {
		return nil, usagef("invalid tokens (%s, then --tokens-file %s): %v", EnvTokens, file, err)
	}
	return tokens, nil
}

// loopback reports whether addr listens on a loopback address only ("127.0.0.1:8080",
// "[::1]:0", "localhost:8080"); an empty host listens on every interface.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// serve runs an executor until ctx ends, SIGINT or SIGTERM arrives, or the server stops on
// its own, then shuts it down: cfg.ShutdownTimeout for running tasks to reach a stage boundary,
// then shutdownGrace for the cancelled ones to record how they ended. A second SIGINT or
// SIGTERM during the shutdown cuts it short: the running stages are cancelled at once.
func (a *invocation) serve(ctx context.Context, cfg server.Config, level slog.Level) error {
	logger := newLogger(a.stderr, level)
	cfg.Logger = logger // the executor adds its name to its lines itself
	// Signals are caught from the start: one arriving while the executor starts shuts it down
	// once started, instead of killing it half-registered.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if cfg.Name == "" {
		cfg.Name = members.DefaultName()
	}
	logger = logger.With("executor", cfg.Name)
	// go-redis's own lines (failed dials…), from the first connection on: structured, and not
	// one per failed dial.
	redisconn.SetLogger(logger)
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	for _, register := range a.kinds {
		if err := register(srv.Kinds()); err != nil {
			return fmt.Errorf("cli: register stage kinds: %w", err)
		}
	}
	// A signal that arrives meanwhile does not cut the start short: it is handled once started.
	if err := srv.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	var serveErr error
	// A signal that ended ctx (main's signal.NotifyContext) reaches sigs too: that copy is not
	// a second signal.
	echo := false
	select {
	case <-ctx.Done():
		echo = endedBySignal(ctx)
		logger.Info("executor shutting down", "reason", context.Cause(ctx).Error(), "timeout", cfg.ShutdownTimeout.String())
	case sig := <-sigs:
		logger.Info("executor shutting down", "reason", sig.String()+" signal received", "timeout", cfg.ShutdownTimeout.String())
	case serveErr = <-srv.Done():
		logger.Error("executor stopped serving", "err", serveErr)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout+shutdownGrace)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- srv.Stop(sctx) }()
	for waiting := true; waiting; {
		select {
		case err = <-shut:
			waiting = false
		case sig := <-sigs:
			if echo {
				echo = false
				continue
			}
			logger.Warn("executor shutdown cut short by a second signal: running stages are cancelled now; their tasks end INTERRUPTED, checkpoints intact",
				"signal", sig.String())
			srv.CutShort()
			err, waiting = <-shut, false
		}
	}
	if err != nil {
		logger.Error("executor shutdown", "err", err)
		if serveErr == nil {
			serveErr = err
		}
	} else {
		logger.Info("executor stopped")
	}
	return serveErr
}

// newLogger logs records of level and above as JSON lines to w, or as text when w is a
// terminal.
func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if terminal(w) != nil {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// endedBySignal reports whether ctx was ended by a signal (signal.NotifyContext's cause, whose
// type os/signal does not export: "<signal> signal received").
func endedBySignal(ctx context.Context) bool {
	cause := context.Cause(ctx)
	return cause != nil && strings.HasSuffix(cause.Error(), " signal received")
}
