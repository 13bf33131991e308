package eventstream

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/event"
	"github.com/executor-dev/executor/infra/rediskey"
)

// Defaults of Options.
const (
	// DefaultMaxLen is the stream's approximate cap, in entries.
	DefaultMaxLen = 10_000
	// DefaultBuffer is how many events may wait to be written.
	DefaultBuffer = 4096
	// batchSize is the most events one stream entry holds.
	batchSize = 64
	// lingerFor is how long a batch waits for more events after its first, unless full.
	lingerFor = 5 * time.Millisecond
)

// The fields of a stream entry: FieldBatch holds the JSON array of the events one executor
// wrote together (what the Stream writes); Field holds one event's JSON (what executors
// before batching wrote, still read).
const (
	Field      = "event"
	FieldBatch = "events"
)

// Options configures a Stream. The zero value means every default.
type Options struct {
	// Keys names the stream (Keys.Events()); the zero value means rediskey.New("").
	Keys rediskey.Keys
	// MaxLen caps the stream at about MaxLen events (an entry of n events is written with
	// XADD MAXLEN ⌈MaxLen/n⌉); zero or negative means DefaultMaxLen.
	MaxLen int64
	// Buffer is how many events may wait to be written; zero or negative means
	// DefaultBuffer. Events published while it is full are dropped.
	Buffer int
	// Logger receives outages and overflows; nil means slog.Default().
	Logger *slog.Logger
}

// Stream appends events to a Redis Stream. Its methods are safe for concurrent use.
type Stream struct {
	client redis.UniversalClient
	key    string
	maxLen int64
	log    *slog.Logger

	events   chan event.Event
	dropped  atomic.Uint64 // every event not written, whatever the reason
	overflow atomic.Uint64 // events dropped because the buffer was full

	// mu orders Publish's send against Stop's close of events: Publish holds it shared.
	mu      sync.RWMutex
	started bool
	stopped bool

	ctx    context.Context // the writes'; cancelled when Stop's context ends first
	cancel context.CancelFunc
	done   chan struct{} // closed when the writer returns
}

var _ event.Publisher = (*Stream)(nil)

// New returns a stopped Stream on client: events published before Start wait in the buffer.
func New(client redis.UniversalClient, opts Options) *Stream {
	if opts.Keys.Prefix() == "" {
		opts.Keys = rediskey.New("")
	}
	if opts.MaxLen <= 0 {
		opts.MaxLen = DefaultMaxLen
	}
	if opts.Buffer <= 0 {
		opts.Buffer = DefaultBuffer
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Stream{
		client: client,
		key:    opts.Keys.Events(),
		maxLen: opts.MaxLen,
		log:    opts.Logger.With("stream", opts.Keys.Events()),
		events: make(chan event.Event, opts.Buffer),
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
	}
}

// Publish queues e to be written. It never blocks: when the buffer is full, or after Stop,
// e is dropped and counted.
func (s *Stream) Publish(e event.Event) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.stopped {
		s.dropped.Add(1)
		return
	}
	select {
	case s.events <- e:
	default:
		s.overflow.Add(1)
		s.dropped.Add(1)
	}
}

// Dropped returns how many events were not written: published while the buffer was full or
// after Stop, left pending when Stop's context ended, or lost to a failed write.
func (s *Stream) Dropped() uint64 { return s.dropped.Load() }

// Start starts the goroutine that writes the events, until Stop; ctx is not used. It never
// fails. Starting a started or stopped Stream does nothing.
func (s *Stream) Start(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.stopped {
		return nil
	}
	s.started = true
	go s.run()
	return nil
}

// Stop stops taking events, writes those pending and waits for the writer. When ctx ends
// first, the pending events are dropped (and counted), and Stop returns ctx's error at once:
// the writer then returns as soon as the pipeline it is sending does (within the client's
// read and write timeouts; the client ignores the context on the socket unless
// ContextTimeoutEnabled). Stop may be called more than once, and without Start (the pending
// events are then dropped).
func (s *Stream) Stop(ctx context.Context) error {
	s.mu.Lock()
	if !s.stopped {
		s.stopped = true
		close(s.events)
		if !s.started {
			for range s.events {
				s.dropped.Add(1)
			}
			close(s.done)
		}
	}
	s.mu.Unlock()
	select {
	case <-s.done:
		s.cancel()
		return nil
	case <-ctx.Done():
		s.cancel()
		select {
		case <-s.done:
			return nil
		default:
			return ctx.Err()
		}
	}
}
