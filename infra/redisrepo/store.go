package redisrepo

import (
	"cmp"
	"context"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"

	"errors"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/rediskey"
)

// DefaultTTL is how long plan, task, checkpoint and index keys live after their last write.
const DefaultTTL = 7 * 24 * time.Hour

// batchSize bounds the commands of one pipelined batch when a plan is created.
const batchSize = 512

// pipelineWorkers bounds the pipelined batches of one bulk operation (creating a plan) in
// flight at once: Redis runs one while the next is encoded and sent.
const pipelineWorkers = 4

// inBatches calls fn on the consecutive ranges [start, end) of n items, size items each, up
// to pipelineWorkers at a time. The first error cancels the rest and is returned.
func inBatches(ctx context.Context, n, size int, fn func(ctx context.Context, start, end int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(pipelineWorkers)
	for start := 0; start < n; start += size {
		g.Go(func() error { return fn(ctx, start, min(start+size, n)) })
	}
	return g.Wait()
}

// Options tunes a Store. Zero fields take defaults.
type Options struct {
	Keys    rediskey.Keys   // default rediskey.New("")
	TTL     time.Duration   // default DefaultTTL
	Monitor *outage.Monitor // shared with the locker; default a new one
	Logger  *slog.Logger    // default slog.Default()
	// Batched runs the scripts of runs (fence bumps, task writes, tenant releases), so that
	// many runs share one round trip: the executor passes infra/batch's Scripter, on the
	// client's auto-pipeline, each wait bounded. Reads and other commands go on the client (a
	// query waits for no batch). Default: the client itself.
	Batched redis.Scripter
	// OnConflict is told about a task whose write-back was refused because another executor
	// took it (or its tenant) while Redis was away: this executor's run of it must stop.
	OnConflict func(taskID string)
	// OnRestored is told, in a goroutine of its own, that Redis answers again after an
	// outage and everything journaled was written back; lost: Redis had lost its data (it
	// came back empty), so whatever else lives there (the dispatch queues) must be rebuilt;
	// then it is told only once new claims may be made again (one lease TTL after the loss),
	// when the other executors have written back their copies too: a task this executor holds
	// PENDING may have run to its end on another.
	OnRestored func(lost bool)
	// LeaseTTL is the tenant lease TTL of the executors (default DefaultLeaseTTL). A store that
	// finds Redis healthy checks every LeaseTTL/3 that Redis still holds its data (its
	// sentinel key and the generation): a Redis that restarted empty, or was flushed, is
	// noticed within a lease TTL even by an executor that writes nothing. After such a loss,
	// new tenant claims wait one LeaseTTL (a *task.ClaimsPausedError).
	LeaseTTL time.Duration
	// CacheTasks bounds the in-memory mirror (serve --cache-tasks): besides what it must keep
	// (the tasks and plans this executor runs or accepted that have not ended, and everything
	// journaled while Redis is away), it caches at most CacheTasks tasks that Redis holds
	// (ended ones, and ones only read), each with its checkpoint, and ended plans whose task
	// lists add up to as many ids; the least recently used go first, and a read that misses
	// the mirror reads Redis. Default DefaultCacheTasks; negative: no cache.
	CacheTasks int
	// IndexDelay is how long the index row of a task that was RUNNING (its next stage, its
	// end) may wait before it is written, with the rows deferred meanwhile (index.go,
	// planIndex.deferRow). Default DefaultIndexDelay.
	IndexDelay time.Duration
	// Shared says that other executors share the Redis (the `shared` topology): Redis is the
	// only source of truth. A read that cannot reach Redis fails with the outage (never an
	// answer from the mirror, which may be stale or miss what others wrote); a write is sent
	// again, with the same token, until it reaches Redis or its context ends (SharedWriteWait
	// at most without a deadline), and is never made on the mirror alone nor journaled.
	// What the mirror holds still serves to write back after Redis lost its data.
	Shared bool
	// ProbeTimeout bounds the store's own checks of Redis (its probe, its data checks, the
	// writes of deferred index rows): how long Redis may take to answer before the store
	// counts it away. Zero means one second; a shared executor passes its client timeout, so
	// that a slow Redis is not counted away.
	ProbeTimeout time.Duration
}

// SharedWriteWait bounds how long a write of a Shared store waits for Redis when its context
// has no deadline of its own (an operator's command: it answers 503 after that).
const SharedWriteWait = 2 * time.Second

// DefaultIndexDelay is Options.IndexDelay's default.
const DefaultIndexDelay = 20 * time.Millisecond

// DefaultLeaseTTL is Options.LeaseTTL's default, the orchestrator's default lease TTL.
const DefaultLeaseTTL = time.Minute

// Store is the Redis-backed store with its in-memory mirror: the repositories' reads and
// writes go to Redis (the …Online methods), the mirror caching what they read and wrote.
// Two services of its own watch Redis: lossWatch finds a Redis that lost its data (loss.go),
// writeBack keeps, while Redis is away, what changed on the mirror, and writes it back
// (gate.go, resync.go). A Shared store journals only after a loss (gate_shared.go).
type Store struct {
	client    redis.UniversalClient
	batched   redis.Scripter // see Options.Batched
	keys      rediskey.Keys
	ttl       time.Duration
	mirror    *memrepo.DB
	audit     *AuditLog // the operators' actions (audit.go)
	mon       *outage.Monitor
	log       *slog.Logger
	written   writtenFields // the task fields each run wrote last, to send only changes
	specs     specCache     // stage templates of plans the mirror does not hold
	hints     *latestHints  // tenants' latest tasks as last seen: a tenant query's guess (hints.go)
	leaseTTL  time.Duration // see Options.LeaseTTL
	writing   *inflight     // this executor's writes under way (reads do not record those aggregates)
	writer    string        // the prefix of this process's write tokens (token)
	shared    bool          // see Options.Shared
	probeWait time.Duration // Options.ProbeTimeout, or probeTimeout
	afterFail func()        // tests only: runs when a change found Redis away, before it journals
	ready     string        // this store's readiness key (Ready)
	readyMu   sync.Mutex    // one Ready at a time
	index     *planIndex    // writes the plans' index rows, some deferred (index.go)
	watch     *lossWatch    // finds a Redis that lost its data
	back      *writeBack    // the journal of what changed while Redis was away, and its write-back

	stop chan struct{}
	done chan struct{}
}

// planIndex writes the rows of the plans' task indexes (a plan's summary and listing read
// them): at once, or, for a RUNNING task's next row, deferred a moment so that a run's rows
// share a write (index.go, index_new.go, index_pending.go).
type planIndex struct {
	s       *Store
	pending pendingRows // index rows not written yet
}

// lossWatch finds a Redis that lost this executor's data: its sentinel key gone, the
// generation changed, a Redis Cluster master replaced (loss.go, generation.go, masters.go);
// it makes new tenant claims wait after a loss.
type lossWatch struct {
	s           *Store
	instance    string      // this store's sentinel key, to notice a Redis that lost its data
	rollback    atomic.Bool // Redis lost part of its data (masterChanged): renew the generation
	lastMasters masters     // a Redis Cluster's masters as last seen (checkMasters; the probe's goroutine)
	gen         generation  // the generation of Redis's data this store saw last
	lostData    atomic.Bool // a write found Redis without data it held: write everything back
}

// writeBack keeps what changed on the mirror while Redis was away (the journal, with each
// aggregate's base version and its writes in doubt) and writes it back, fenced, once Redis
// answers (gate.go, journal.go, resync.go, cancelwins.go).
type writeBack struct {
	s          *Store
	journal    *journal
	doubts     sync.Map // aggregate id → token of its last write that failed without a reply
	onConflict func(taskID string)
	onRestored func(lost bool)
}

// New returns a store on client. Start it to write back what was journaled while Redis was
// away.
func New(client redis.UniversalClient, opts Options) *Store {
	if opts.Keys == (rediskey.Keys{}) {
		opts.Keys = rediskey.New("")
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Monitor == nil {
		opts.Monitor = outage.NewMonitor(opts.Logger)
	}
	if opts.Batched == nil {
		opts.Batched = client
	}
	if opts.OnConflict == nil {
		opts.OnConflict = func(string) {}
	}
	if opts.OnRestored == nil {
		opts.OnRestored = func(bool) {}
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = DefaultLeaseTTL
	}
	if opts.IndexDelay <= 0 {
		opts.IndexDelay = DefaultIndexDelay
	}
	id := ulid.Make().String()
	s := &Store{
		ready:  opts.Keys.Ready(id),
		client: client, batched: opts.Batched, keys: opts.Keys, ttl: opts.TTL, mirror: newMirror(opts), mon: opts.Monitor,
		writing: newInflight(), hints: newLatestHints(), log: opts.Logger, leaseTTL: opts.LeaseTTL,
		shared: opts.Shared, probeWait: cmp.Or(opts.ProbeTimeout, probeTimeout),
		writer: strconv.FormatUint(rand.Uint64()|1<<63, 36)[:6] + ".", // the top bit: always 13 digits
	}
	s.index = &planIndex{s: s, pending: pendingRows{delay: opts.IndexDelay}}
	s.watch = &lossWatch{s: s, instance: opts.Keys.Instance(id)}
	s.back = &writeBack{s: s, journal: newJournal(), onConflict: opts.OnConflict, onRestored: opts.OnRestored}
	s.audit = newAuditLog(s)
	return s
}

// JournalLen returns how many aggregates wait to be written back to Redis.
func (s *Store) JournalLen() int { return s.back.journalLen() }

// Settled asks Redis whether the executors sharing it have written back what they held
// after it lost its data: a *task.ClaimsPausedError while new claims (and the commands on what
// other executors run) still wait, nil after. Finding the loss itself, it reports it (this
// executor writes back what it holds too).
func (s *Store) Settled(ctx context.Context) error { return s.watch.claimsAllowed(ctx) }

// ClaimsPausedFor returns how long claims still wait after Redis lost data, as this store last
// learnt (0: they do not): the orchestrator claims no task from the shared queue meanwhile.
func (s *Store) ClaimsPausedFor() time.Duration { return s.watch.claimsPausedFor() }

// MasterChanged records that the client's connections now go to another master (a Sentinel
// failover): the new master may lack writes the old one acknowledged, so the next write-back
// writes back everything this executor holds, as after a loss of data, and renews the
// generation so that the other executors do too.
func (s *Store) MasterChanged(from, to string) { s.watch.masterChanged(from, to) }

// Plans returns the plan repository.
func (s *Store) Plans() *PlanRepo { return &PlanRepo{s: s} }

// Tasks returns the task repository.
func (s *Store) Tasks() *TaskRepo { return &TaskRepo{s: s} }

// Checkpoints returns the checkpoint store.
func (s *Store) Checkpoints() *CheckpointStore { return &CheckpointStore{s: s} }

func (s *Store) ttlSeconds() int64 { return int64(s.ttl / time.Second) }

// wrap prefixes a Redis error; redis.Nil never gets here (callers map it to ErrNotFound).
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("redisrepo: %s: %w", op, err)
}

// isNoScript reports whether Redis lost its script cache (it restarted).
func isNoScript(err error) bool {
	return err != nil && redis.HasErrorPrefix(err, "NOSCRIPT")
}

// exec runs fill on a fresh pipeline and returns the commands, so callers read each result.
func (s *Store) exec(ctx context.Context, fill func(p redis.Pipeliner)) ([]redis.Cmder, error) {
	cmds, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error { fill(p); return nil })
	if errors.Is(err, redis.Nil) {
		err = nil // a GET that found nothing: callers read each command's own result
	}
	return cmds, err
}
