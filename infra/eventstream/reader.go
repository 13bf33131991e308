package eventstream

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/events"
	"github.com/executor-dev/executor/infra/rediskey"
)

// Defaults of ReaderOptions.
const (
	// DefaultBlock is how long one XREAD BLOCK waits for new entries.
	DefaultBlock = 2 * time.Second
	// readCount is the most entries one XREAD returns.
	readCount = 500
	// minBackoff and maxBackoff bound the wait between two attempts while Redis is away.
	minBackoff = 100 * time.Millisecond
	maxBackoff = 2 * time.Second
)

// Local is the executor's own events, live (events.Hub): what a watch gets while the stream
// cannot be read.
type Local interface {
	Subscribe(f events.Filter) *events.Subscription
}

// ReaderOptions configures a Reader.
type ReaderOptions struct {
	// Keys names the stream (Keys.Events()); the zero value means rediskey.New("").
	Keys rediskey.Keys
	// Local serves watches while the stream cannot be read. Required.
	Local Local
	// Block is how long one XREAD BLOCK waits; zero or negative means DefaultBlock.
	Block time.Duration
	// Logger receives outages; nil means slog.Default().
	Logger *slog.Logger
}

// Reader is the process's one reader of the cluster's event stream: between Start and Stop,
// one goroutine reads the stream with XREAD BLOCK from the last entry it saw and hands the
// entries to the watches of this process (Watch). While no watch is on the stream it parks
// instead of reading (an executor nobody watches pays nothing for the stream but its
// writes), and the next watch positions it at the stream's end. Safe for concurrent use.
type Reader struct {
	client redis.UniversalClient
	key    string
	local  Local
	block  time.Duration
	log    *slog.Logger
	fan    *events.Fanout // the watches on the stream

	mu       sync.Mutex
	up       bool // positioned and reading: watches go to fan; else to local
	parked   bool // no watch on the stream: the goroutine waits on wake instead of reading
	wake     chan position
	fallback map[*events.Subscription]struct{}
	started  bool
	stopped  bool

	connID atomic.Int64                 // the reading connection's CLIENT ID; 0: none
	node   atomic.Pointer[redis.Client] // the client of the node the reading connection is on
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine returns
}

var _ interface {
	Watch(ctx context.Context, f events.Filter, lastEventID string) (*events.Watch, error)
} = (*Reader)(nil)

// NewReader returns a stopped Reader of the stream on client: until Start positions it,
// watches get the local events.
func NewReader(client redis.UniversalClient, opts ReaderOptions) *Reader {
	if opts.Keys.Prefix() == "" {
		opts.Keys = rediskey.New("")
	}
	if opts.Block <= 0 {
		opts.Block = DefaultBlock
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Reader{
		client: client, key: opts.Keys.Events(), local: opts.Local, block: opts.Block,
		log: opts.Logger.With("stream", opts.Keys.Events()), fan: events.NewFanout(),
		fallback: map[*events.Subscription]struct{}{}, wake: make(chan position, 1),
		ctx: ctx, cancel: cancel, done: make(chan struct{}),
	}
}

// Start positions the reader at the stream's end (one round trip, bounded by ctx and 2 s;
// when Redis does not answer, the goroutine keeps trying) and starts its goroutine, which
// runs until Stop. It never fails. Starting a started or stopped Reader does nothing.
func (r *Reader) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started || r.stopped {
		return nil
	}
	r.started = true
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	last, err := r.tail(ctx)
	cancel()
	if err == nil {
		r.up = true
	}
	go r.run(last, err == nil)
	return nil
}

// Stop stops the goroutine (unblocking its XREAD with CLIENT UNBLOCK) and ends every watch,
// or gives up when ctx ends: the goroutine then returns once its read does (within the
// block time plus the client's timeouts). Safe to call more than once, and without Start.
func (r *Reader) Stop(ctx context.Context) error {
	r.mu.Lock()
	started := r.started
	r.stopped = true
	r.up = false
	r.closeFallbacks()
	r.fan.CloseAll()
	r.mu.Unlock()
	r.cancel()
	if !started {
		return nil
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if id, node := r.connID.Load(), r.node.Load(); id != 0 && node != nil {
			uctx, cancel := context.WithTimeout(ctx, time.Second)
			_ = node.ClientUnblock(uctx, id).Err() // best effort: the read ends by itself too
			cancel()
		}
		select {
		case <-r.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Watchers returns how many watches read the stream (not counting those on local events).
func (r *Reader) Watchers() int { return r.fan.Subscribers() }

// closeFallbacks ends the watches on local events; r.mu is held.
func (r *Reader) closeFallbacks() {
	for s := range r.fallback {
		s.Close()
		delete(r.fallback, s)
	}
}
