package orchestrator

import (
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/executor-dev/executor/domain/availability"
	"github.com/executor-dev/executor/domain/event"
)

// Defaults of Config.
const (
	DefaultWorkers  = 64
	DefaultLeaseTTL = 60 * time.Second
	DefaultName     = "executor"
)

// Config tunes an Orchestrator. Zero fields take defaults.
type Config struct {
	// Name is the executor's name (serve --name): its runs' lease owners carry it. Default
	// DefaultName.
	Name    string
	Workers int // tasks running at once across all plans; default DefaultWorkers
	// LeaseTTL is the tenant lease's TTL: a run heartbeats every LeaseTTL/3, and a RUNNING task
	// whose heartbeat is older than LeaseTTL and whose lease is gone has lost its owner.
	LeaseTTL time.Duration    // default DefaultLeaseTTL
	Clock    func() time.Time // default time.Now
	Rand     func() float64   // uniform in [0,1), for backoff jitter; default math/rand/v2
	Logger   *slog.Logger     // default slog.Default()
	// Availability says where the executor stands with its store: Degraded (Redis away),
	// nobody else's task can be judged (its owner may be alive on Redis), so reads reap
	// nothing; ClaimsPaused (after Redis lost data: one lease TTL from the loss, while every
	// executor writes back what it holds), no task is claimed from the shared Queue, since its
	// queue may hold entries the loss brought back for tasks that run or ended elsewhere.
	// Default: always up.
	Availability Availability
	// Shared says that other executors share the store (the `shared` topology): the store is
	// the only source of truth. A run then holds a self-fencing lease: it never starts a stage
	// once its lease's deadline (lease.Deadline) has passed, and its writes wait for the store
	// no longer than that deadline. A plan whose task ended while the store is away is settled
	// once it answers, never from memory (this executor's copies of the plan's other tasks
	// may be stale). Without it (an executor alone on its Redis), a plan ends on memory when
	// its last task does.
	Shared bool
	// Events is told of every plan, task and stage transition (docs/api.md, GET /v1/events).
	// Default: nobody.
	Events event.Publisher
	// Metrics is told of stage attempts, retries, fenced writes and lease contention and
	// losses (docs/metrics.md). Default: nobody.
	Metrics Metrics
	// Scheduler starts SCHEDULED plans at their time (it calls StartScheduled). Without one,
	// a plan with a startAt in the future is refused (ErrNoScheduler).
	Scheduler Scheduler
	// Cluster tells which executors are alive (infra/members): a reader reaps no task whose
	// executor is alive, and nothing while this executor's own liveness lapsed lately (a
	// stalled Redis lapses every executor's alike). Default: none (judged by the lease and the
	// heartbeat alone).
	Cluster Cluster
	// Queue holds the plans' queued tasks and enforces their limits (infra/dispatch).
	// Required.
	Queue Queue
	// Fallback is an in-process queue that keeps a shared Queue's work going while it does
	// not answer (see fallback.go). Default: none (refused pushes are made again later).
	Fallback Queue
	// Signals tells the other executors sharing the store of operators' commands (they call
	// Receive). Default: none (one executor alone: it acts on its own commands directly).
	Signals Signals
	// ExecutorURL returns the base URL of this executor's HTTP API, which stage templates
	// read as .ExecutorURL. Default: none (empty).
	ExecutorURL func() string
	// Secrets resolves {{secret "name"}} in stage params when a stage runs (serve's
	// --secrets-dir); their values are hidden in what an attempt leaves behind. Default: none
	// (a template that reads a secret fails the stage permanently).
	Secrets Secrets
	// Transcripts keeps the stdout and stderr tails of every attempt that printed any (the
	// exec kind's), secrets hidden, beside its ledger entry. Default: none (nothing is kept).
	Transcripts Transcripts
	// MaxOutputBytes bounds one stage's output (serve --max-output-bytes), and
	// MaxTaskOutputBytes the outputs of all a task's stages together, as kept in its
	// checkpoint (--max-task-output-bytes): a larger output fails its stage permanently.
	// Defaults DefaultMaxOutputBytes and DefaultMaxTaskOutputBytes.
	MaxOutputBytes, MaxTaskOutputBytes int
	// StopGrace is how long Stop lets running tasks reach their next stage boundary before it
	// cancels their stages (serve --shutdown-timeout); CutShort ends it early. Default 0: Stop
	// cancels them at once.
	StopGrace time.Duration
}

func (c Config) withDefaults() Config {
	if c.MaxOutputBytes <= 0 {
		c.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if c.MaxTaskOutputBytes <= 0 {
		c.MaxTaskOutputBytes = DefaultMaxTaskOutputBytes
	}
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.Workers <= 0 {
		c.Workers = DefaultWorkers
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = DefaultLeaseTTL
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.Float64
	}
	if c.Availability == nil {
		c.Availability = availability.Func(availability.Up)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Events == nil {
		c.Events = noEvents{}
	}
	if c.Metrics == nil {
		c.Metrics = noMetrics{}
	}
	if c.ExecutorURL == nil {
		c.ExecutorURL = func() string { return "" }
	}
	return c
}
