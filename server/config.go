package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/auth"
	"github.com/executor-dev/executor/infra/members"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// Defaults of Config, the owning packages' own (serve's flags default to them).
const (
	DefaultWorkers  = orchestrator.DefaultWorkers  // Config.Workers
	DefaultLeaseTTL = orchestrator.DefaultLeaseTTL // Config.LeaseTTL
	DefaultPrefix   = rediskey.DefaultPrefix       // Config.Prefix
	// DefaultMaxOutputBytes and DefaultMaxTaskOutputBytes are Config.MaxOutputBytes's and
	// Config.MaxTaskOutputBytes's.
	DefaultMaxOutputBytes     = orchestrator.DefaultMaxOutputBytes
	DefaultMaxTaskOutputBytes = orchestrator.DefaultMaxTaskOutputBytes
	// DefaultRetention is Config.Retention's: how long the store (memory or Redis) keeps an
	// ended plan.
	DefaultRetention = redisrepo.DefaultTTL
	// DefaultCacheTasks is Config.CacheTasks's: the tasks the memory mirror caches.
	DefaultCacheTasks = redisrepo.DefaultCacheTasks
	// DefaultShutdownTimeout is Config.ShutdownTimeout's.
	DefaultShutdownTimeout = 30 * time.Second
)

// Config is the executor's configuration.
type Config struct {
	Addr string // listen address; "127.0.0.1:0" picks a free port
	// Name is the executor's name among the executors sharing its store (serve --name), in
	// every log line and in GET /v1/executors; it must match members.NamePattern (CheckName).
	// Default members.DefaultName(): "<hostname>-<pid>".
	Name    string
	Workers int // tasks running at once across all plans; default DefaultWorkers
	// RedisURL names the Redis (one node, a Cluster or a Sentinel-managed master:
	// redisconn's URL forms); empty: the embedded in-memory store.
	RedisURL string
	// RedisCluster makes a one-node RedisURL the seed of a Redis Cluster (--redis-cluster).
	RedisCluster bool
	Prefix       string        // Redis key prefix; default DefaultPrefix
	LeaseTTL     time.Duration // tenant lease TTL; default DefaultLeaseTTL
	// Retention is how long the store keeps an ended plan with its tasks, checkpoints,
	// transcripts and tenant indexes, from its end (nothing of an active plan goes): Redis its
	// keys' TTL, the in-memory store its sweep (memrepo.NewStore); default DefaultRetention.
	Retention time.Duration
	// CacheTasks bounds the memory mirror's cache of tasks Redis holds (ended, or only read),
	// besides what this executor runs or accepted and what it journaled: 0 the default
	// (DefaultCacheTasks), negative no cache.
	CacheTasks int
	// Topology says whether other executors share the Redis (serve --topology): "" or
	// TopologyShared (the default), or TopologyAlone. Ignored on the in-memory store.
	Topology Topology
	Logger   *slog.Logger // default slog.Default()
	// EventHeartbeat is how often GET /v1/events writes a heartbeat; default
	// api.DefaultEventHeartbeat.
	EventHeartbeat time.Duration
	// EventStream is ignored (--events-stream, deprecated): on Redis every executor writes its
	// events to the stream <prefix>events and serves GET /v1/events from it.
	EventStream bool
	// EventStreamMaxLen caps the Redis stream of the events (XADD MAXLEN ~); default
	// eventstream.DefaultMaxLen.
	EventStreamMaxLen int64
	// Tokens are the bearer tokens the API accepts (EXECUTOR_TOKENS, --tokens-file). With none
	// the API is open; `serve` allows that on a loopback address only, unless --insecure.
	Tokens []auth.Token
	// HTTPAllow is the http stage kind's allow-list of hosts and CIDRs (--http-allow, parsed
	// by stagekind.ParseAllowList). Nil or empty: any destination but link-local and cloud
	// metadata addresses.
	HTTPAllow *stagekind.AllowList
	// ExecAllow is the exec stage kind's allow-list of commands (--exec-allow, parsed by
	// stagekind.ParseExecAllow). Nil or empty: the exec kind is disabled.
	ExecAllow *stagekind.ExecAllowList
	// PrometheusAllow is the prometheus stage kind's allow-list of hosts and CIDRs
	// (--prometheus-allow), with the http kind's rules. Nil or empty: any address but
	// link-local and cloud metadata ones.
	PrometheusAllow *stagekind.AllowList
	// NotifyBackoff is the wait after a notification's first failed delivery, doubled after
	// each (--notify-backoff); default notify.DefaultBackoff.
	NotifyBackoff time.Duration
	// SecretsDir is the directory of the secrets stage templates read ({{secret "name"}}), one
	// file each (--secrets-dir); empty: none.
	SecretsDir string
	// ExecEnv names variables of the executor's environment passed to exec stages' commands
	// besides PATH and HOME (--exec-env).
	ExecEnv []string
	// Limits bound submissions (--max-tenants, --max-stages, --max-params-bytes, --max-queued);
	// zero fields take the app defaults.
	Limits app.Limits
	// MaxBodyBytes bounds a request body (--max-body-bytes); default api.DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxEventStreams and MaxEventStreamsPerClient cap the GET /v1/events streams open at once
	// (--max-event-streams, --max-event-streams-per-client); defaults api's.
	MaxEventStreams, MaxEventStreamsPerClient int
	// MaxOutputBytes and MaxTaskOutputBytes bound a stage's output and a task's outputs
	// together (--max-output-bytes, --max-task-output-bytes); defaults orchestrator's.
	MaxOutputBytes, MaxTaskOutputBytes int
	// ShutdownTimeout is how long Server.Stop (Executor.Drain) lets running tasks reach their
	// next stage boundary before cancelling their stages (--shutdown-timeout); default
	// DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// Wrap, when set, wraps the HTTP API's handler: a custom binary's own middleware, or a
	// test's check of every answer against docs/openapi.yaml (servertest).
	Wrap func(http.Handler) http.Handler
}

// withDefaults returns cfg with its defaults filled in and its logger naming the executor,
// or an error when its name cannot name an executor.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Name == "" {
		cfg.Name = members.DefaultName()
	}
	if err := CheckName(cfg.Name); err != nil {
		return cfg, fmt.Errorf("server: --name: %w", err)
	}
	cfg.Logger = cfg.Logger.With("executor", cfg.Name)
	if _, err := ParseTopology(string(cfg.Topology)); err != nil {
		return cfg, fmt.Errorf("server: --topology: %w", err)
	}
	cfg.Topology = cfg.topology()
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultRetention
	}
	return cfg, nil
}
