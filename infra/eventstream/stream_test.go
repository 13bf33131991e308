package eventstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/event"
	evs "github.com/executor-dev/executor/events"
	"github.com/executor-dev/executor/infra/eventstream"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/wire"
)

func TestStopWritesEveryEventInPublishOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, prefix, key string
	}{
		{"default prefix", "", "executor:events"},
		{"custom prefix", "x:", "x:events"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			client := srv.Client()
			s := eventstream.New(client, eventstream.Options{Keys: rediskey.New(tt.prefix), Logger: quiet()})
			require.NoError(t, s.Start(context.Background()))
			want := events(100)
			for _, e := range want {
				s.Publish(e)
			}
			require.NoError(t, s.Stop(context.Background()))

			require.Equal(t, want, readStream(t, client, tt.key))
			require.Zero(t, s.Dropped())
		})
	}
}

func TestMaxLenCapsTheStreamApproximately(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		maxLen  int64
		publish int
		atLeast int
		atMost  int
	}{
		// An entry of n events trims the stream to ⌈MaxLen/n⌉ entries: that entry and
		// ⌈MaxLen/n⌉-1 older ones of at least one event each, so at least n + ⌈MaxLen/n⌉ - 1
		// events, which is 2√MaxLen - 1 at the least (13 for 50: the older entries may hold
		// a single event each, as a clean-clone run found), and at most one entry's more.
		{"trimmed to about 50", 50, 1000, 13, 50 + 64},
		{"under the cap, untrimmed", 500, 300, 300, 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			client := srv.Client()
			s := eventstream.New(client, eventstream.Options{MaxLen: tt.maxLen, Buffer: 2 * tt.publish, Logger: quiet()})
			require.NoError(t, s.Start(context.Background()))
			all := events(tt.publish)
			for i, e := range all {
				s.Publish(e)
				if i%7 == 0 { // batches of several sizes
					time.Sleep(time.Millisecond)
				}
			}
			require.NoError(t, s.Stop(context.Background()))
			require.Zero(t, s.Dropped())

			got := readStream(t, client, "executor:events")
			t.Logf("%d events kept", len(got))
			require.GreaterOrEqual(t, len(got), tt.atLeast)
			require.LessOrEqual(t, len(got), tt.atMost)
			require.Equal(t, all[len(all)-len(got):], got, "the newest events are kept, in order")
		})
	}
}

// Under load the events share entries: far fewer entries (and XADDs) than events.
func TestEventsPublishedTogetherShareAnEntry(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := srv.Client()
	s := eventstream.New(client, eventstream.Options{Logger: quiet()})
	require.NoError(t, s.Start(context.Background()))
	all := events(1000)
	publish(s, all)
	requireStops(t, s)
	n, err := client.XLen(context.Background(), "executor:events").Result()
	require.NoError(t, err)
	require.LessOrEqual(t, n, int64(1000/8), "at most one entry per 8 events")
	require.Equal(t, all, readStream(t, client, "executor:events"))
}

func TestPublishNeverBlocksWhileRedisIsDown(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := executorClient(t, srv)
	logs := &recorder{}
	s := eventstream.New(client, eventstream.Options{Buffer: 8, Logger: slog.New(logs)})
	require.NoError(t, s.Start(context.Background()))
	t.Cleanup(func() { _ = s.Stop(context.Background()) })

	srv.Kill()
	begin := time.Now()
	for _, e := range events(10_000) {
		s.Publish(e)
	}
	took := time.Since(begin)
	t.Logf("10,000 publishes with Redis down took %v; %d dropped", took, s.Dropped())
	require.Less(t, took, 2*time.Second)
	require.Positive(t, s.Dropped())

	// Writes fail for a while (go-redis retries each one a few times first): one warning.
	outage := events(1)[0]
	require.Eventually(t, func() bool {
		s.Publish(outage)
		return logs.count(slog.LevelWarn, "redis write failed") > 0
	}, 10*time.Second, 20*time.Millisecond, "the outage is logged")
	t.Logf("outage logged after %v", time.Since(begin))
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		s.Publish(outage)
	}

	srv.Restart() // empty: every entry it holds was written after the restart
	next := event.Event{Kind: event.Plan, PlanID: "after-restart", Status: "RUNNING", At: time.Unix(0, 0).UTC()}
	require.Eventually(t, func() bool {
		s.Publish(next)
		es, err := xrange(client, "executor:events")
		return err == nil && len(es) > 0 && es[len(es)-1] == next
	}, 10*time.Second, 20*time.Millisecond, "events are written again once Redis is back")
	t.Logf("written again after %v", time.Since(begin))
	dropped := s.Dropped()
	require.NoError(t, s.Stop(context.Background()))
	require.Equal(t, dropped, s.Dropped(), "what was pending at Stop is written")

	require.Equal(t, 1, logs.count(slog.LevelWarn, "redis write failed"), "one warning per outage")
	require.Equal(t, 1, logs.count(slog.LevelInfo, "succeed again"), "one notice when it ends")
}

func TestLifecycleIsSafeInAnyOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		run         func(t *testing.T, s *eventstream.Stream, es []event.Event)
		written     int
		dropped     uint64
		stopsCalled int
	}{
		{"start twice", func(t *testing.T, s *eventstream.Stream, es []event.Event) {
			require.NoError(t, s.Start(context.Background()))
			require.NoError(t, s.Start(context.Background()))
			publish(s, es)
			requireStops(t, s)
		}, 10, 0, 1},
		{"stop twice", func(t *testing.T, s *eventstream.Stream, es []event.Event) {
			require.NoError(t, s.Start(context.Background()))
			publish(s, es)
			requireStops(t, s)
			requireStops(t, s)
		}, 10, 0, 2},
		{"publish after stop", func(t *testing.T, s *eventstream.Stream, es []event.Event) {
			require.NoError(t, s.Start(context.Background()))
			requireStops(t, s)
			publish(s, es)
		}, 0, 10, 1},
		{"stop without start", func(t *testing.T, s *eventstream.Stream, es []event.Event) {
			publish(s, es)
			requireStops(t, s)
		}, 0, 10, 1},
		{"start after stop", func(t *testing.T, s *eventstream.Stream, es []event.Event) {
			requireStops(t, s)
			require.NoError(t, s.Start(context.Background()))
			publish(s, es)
			requireStops(t, s)
		}, 0, 10, 2},
		{"published before start", func(t *testing.T, s *eventstream.Stream, es []event.Event) {
			publish(s, es)
			require.NoError(t, s.Start(context.Background()))
			requireStops(t, s)
		}, 10, 0, 1},
		{"concurrent stops", func(t *testing.T, s *eventstream.Stream, es []event.Event) {
			require.NoError(t, s.Start(context.Background()))
			publish(s, es)
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() { assert.NoError(t, s.Stop(context.Background())) })
			}
			wg.Wait()
		}, 10, 0, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			client := srv.Client()
			s := eventstream.New(client, eventstream.Options{Logger: quiet()})
			es := events(10)
			tt.run(t, s, es)

			require.Equal(t, tt.dropped, s.Dropped())
			require.Equal(t, es[:tt.written], readStream(t, client, "executor:events"))
		})
	}
}

func TestStopIsBoundedByItsContext(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := redis.NewClient(&redis.Options{
		Addr: srv.Addr(), ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond,
		MaxRetries: -1,
	})
	t.Cleanup(func() { _ = client.Close() })
	require.NoError(t, client.Ping(context.Background()).Err())
	s := eventstream.New(client, eventstream.Options{Logger: quiet()})
	require.NoError(t, s.Start(context.Background()))

	srv.Freeze() // writes hang until the client's read timeout
	t.Cleanup(srv.Thaw)
	publish(s, events(10))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	begin := time.Now()
	err := s.Stop(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(begin), time.Second, "Stop returns when its context ends")

	// The writer returns once its write times out; what it could not write is counted.
	require.NoError(t, s.Stop(context.Background()), "a later Stop waits for the writer")
	require.Equal(t, uint64(10), s.Dropped())
}

// Not parallel: it counts the process's goroutines, so it runs while the parallel tests of
// the package wait for the sequential ones to finish.
func TestStopLeavesNoGoroutine(t *testing.T) {
	srv := redistest.Start(t)
	client := srv.Client()
	// Warm the client's pool up so its own goroutines are in the baseline.
	require.NoError(t, client.Ping(context.Background()).Err())
	before := redistest.SettledGoroutines(t)

	s := eventstream.New(client, eventstream.Options{Logger: quiet()})
	require.NoError(t, s.Start(context.Background()))
	publish(s, events(1000))
	require.NoError(t, s.Stop(context.Background()))
	require.Len(t, readStream(t, client, "executor:events"), 1000)

	redistest.RequireGoroutinesBackTo(t, before)
}

// events returns n distinct events of every kind, as they read back from JSON.
func events(n int) []event.Event {
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	es := make([]event.Event, n)
	for i := range es {
		e := event.Event{
			ID: uint64(i + 1), At: at.Add(time.Duration(i) * time.Millisecond), PlanID: "P1",
			Status: "RUNNING",
		}
		switch i % 3 {
		case 0:
			e.Kind = event.Plan
		case 1:
			e.Kind, e.TaskID, e.TenantID, e.Stage, e.Run = event.Task, fmt.Sprintf("T%d", i), fmt.Sprintf("tenant-%d", i), i%5, 2
			e.Last = &event.Attempt{StageIndex: i % 5, Stage: "build", Attempt: 1, Outcome: "failed", Class: "transient"}
		case 2:
			e.Kind, e.TaskID, e.TenantID, e.Stage, e.StageName = event.Stage, fmt.Sprintf("T%d", i), fmt.Sprintf("tenant-%d", i), i%5, "deploy"
		}
		es[i] = e
	}
	return es
}

func publish(s *eventstream.Stream, es []event.Event) {
	for _, e := range es {
		s.Publish(e)
	}
}

func requireStops(t *testing.T, s *eventstream.Stream) {
	t.Helper()
	require.NoError(t, s.Stop(context.Background()))
}

// readStream decodes every entry of the stream at key, oldest first.
func readStream(t *testing.T, client *redis.Client, key string) []event.Event {
	t.Helper()
	es, err := xrange(client, key)
	require.NoError(t, err)
	return es
}

// xrange decodes the events of every entry of the stream at key, oldest first: each entry
// must hold one field, eventstream.FieldBatch, with a JSON array of at least one event.
func xrange(client *redis.Client, key string) ([]event.Event, error) {
	msgs, err := client.XRange(context.Background(), key, "-", "+").Result()
	if err != nil {
		return nil, err
	}
	es := []event.Event{}
	for _, m := range msgs {
		data, ok := m.Values[eventstream.FieldBatch].(string)
		if len(m.Values) != 1 || !ok {
			return nil, fmt.Errorf("entry %s: want one field %q, got %v", m.ID, eventstream.FieldBatch, m.Values)
		}
		var batch []stored
		if err := json.Unmarshal([]byte(data), &batch); err != nil {
			return nil, fmt.Errorf("entry %s: %w", m.ID, err)
		}
		if len(batch) == 0 {
			return nil, fmt.Errorf("entry %s: no event", m.ID)
		}
		for _, s := range batch {
			es = append(es, s.event())
		}
	}
	return es, nil
}

// stored is an event as the stream holds it (docs/redis.md, The event stream): its wire form,
// with the publishing executor's own number as its id.
type stored struct {
	ID uint64 `json:"id"`
	wire.Event
}

// storedOf is e as the stream holds it.
func storedOf(e event.Event) stored { return stored{ID: e.ID, Event: evs.ToWire("", e)} }

// event is the event s holds.
func (s stored) event() event.Event {
	e := evs.FromWire(s.Event)
	e.ID = s.ID
	return e
}

// executorClient returns a client set up as the executor's (server/server.go): one retry,
// one dial attempt, 1 s timeouts, so that an outage shows within about a second.
func executorClient(t *testing.T, srv *redistest.Server) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{
		Addr: srv.Addr(), MaxRetries: 1, DialerRetries: 1,
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second, PoolTimeout: time.Second,
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// recorder is a slog.Handler that keeps every record's level and message.
type recorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
	return nil
}

// count returns how many records at level hold substr in their message.
func (r *recorder) count(level slog.Level, substr string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, rec := range r.recs {
		if rec.Level == level && strings.Contains(rec.Message, substr) {
			n++
		}
	}
	return n
}
