package dispatch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
)

// newRedis returns a started Redis dispatch queue on client, stopped when the test ends.
func newRedis(t *testing.T, client redis.UniversalClient, prefix string) *Redis {
	t.Helper()
	r := NewRedis(client, RedisOptions{Prefix: prefix})
	require.NoError(t, r.Start(context.Background()))
	t.Cleanup(func() { require.NoError(t, r.Stop(context.Background())) })
	return r
}

func TestRedisThreeExecutorsClaimEachTaskOnceWithinTheLimit(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	const (
		executors = 3
		workers   = 8
		tasks     = 300
		limit     = 12
	)
	queues := make([]*Redis, executors)
	for i := range queues {
		queues[i] = newRedis(t, srv.Client(), "race:")
	}
	require.NoError(t, queues[0].Push(ctx, "P", Limits{MaxConcurrency: limit}, ids(tasks)))

	var (
		inflight, maxSeen, finished atomic.Int64
		mu                          sync.Mutex
		claims                      = map[string]int{}
		wg                          sync.WaitGroup
		errs                        = make(chan error, executors*workers)
	)
	deadline := time.Now().Add(waitFor)
	for e, q := range queues {
		name := fmt.Sprintf("e%d", e)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for finished.Load() < tasks && time.Now().Before(deadline) {
					id, _, err := q.Claim(ctx, "P", name)
					if err != nil {
						errs <- err
						return
					}
					if id == "" {
						select { // woken by a done, or look again soon
						case <-q.Woken():
						case <-time.After(2 * time.Millisecond):
						}
						continue
					}
					n := inflight.Add(1)
					for m := maxSeen.Load(); n > m && !maxSeen.CompareAndSwap(m, n); m = maxSeen.Load() {
					}
					mu.Lock()
					claims[id]++
					mu.Unlock()
					time.Sleep(time.Millisecond) // a run: long enough for the limit to bind
					inflight.Add(-1)
					if _, _, err := q.Done(ctx, "P", id, false); err != nil {
						errs <- err
						return
					}
					finished.Add(1)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.EqualValues(t, tasks, finished.Load(), "every task ran")
	assert.LessOrEqual(t, maxSeen.Load(), int64(limit), "in flight at once, plan-wide")
	assert.Positive(t, maxSeen.Load())
	t.Logf("at most %d in flight at once", maxSeen.Load())
	require.Len(t, claims, tasks)
	for id, n := range claims {
		assert.Equal(t, 1, n, "%s claimed once", id)
	}
	requireLen(t, queues[1], "P", 0, 0)
}

func TestRedisClaimFailsWhileRedisIsAwayAndWorksAfter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name    string
		opts    func(addr string) *redis.Options
		outage  func(srv *redistest.Server)
		recover func(srv *redistest.Server)
		bound   time.Duration // how long the failing Claim may take
		lost    bool          // Redis restarts empty: the plan is pushed again
	}{
		{
			name: "frozen, the context's deadline honoured",
			opts: func(addr string) *redis.Options {
				return &redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: 1}
			},
			outage: (*redistest.Server).Freeze, recover: (*redistest.Server).Thaw,
			bound: 2 * time.Second,
		},
		{
			name: "frozen, the executor's client: its read timeout",
			opts: func(addr string) *redis.Options {
				return &redis.Options{
					Addr: addr, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
					PoolTimeout: time.Second, MaxRetries: 1,
				}
			},
			outage: (*redistest.Server).Freeze, recover: (*redistest.Server).Thaw,
			bound: 5 * time.Second,
		},
		{
			name: "killed, then restarted empty",
			opts: func(addr string) *redis.Options {
				return &redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: 1, DialerRetries: 1}
			},
			outage: (*redistest.Server).Kill, recover: (*redistest.Server).Restart,
			bound: 2 * time.Second, lost: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			client := redis.NewClient(tc.opts(srv.Addr()))
			t.Cleanup(func() { _ = client.Close() })
			q := NewRedis(client, RedisOptions{Prefix: "fault:"})
			lim := Limits{MaxConcurrency: 5}
			require.NoError(t, q.Push(ctx, "P", lim, []string{"A", "B", "C"}))
			assert.Equal(t, "A", claim(t, q, "P", "e1"))

			tc.outage(srv)
			callCtx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			start := time.Now()
			id, _, err := q.Claim(callCtx, "P", "e1")
			took := time.Since(start)
			cancel()
			require.Error(t, err)
			assert.Empty(t, id)
			assert.True(t, strings.HasPrefix(err.Error(), "dispatch: claim P: "), err.Error())
			assert.NotErrorIs(t, err, redis.Nil)
			assert.Less(t, took, tc.bound, "the failing claim returned in time")
			t.Logf("failed after %v: %v", took, err)

			tc.recover(srv)
			if tc.lost {
				require.NoError(t, q.Push(ctx, "P", lim, []string{"A", "B", "C"}))
			}
			var got string
			require.Eventually(t, func() bool {
				got, _, err = q.Claim(ctx, "P", "e1")
				return err == nil && got != ""
			}, waitFor, tick, "claims work again")
			// A claim whose reply was lost during the freeze may have been applied when the
			// server woke: it is in flight under this executor's name, nothing is lost.
			queued, inflight, err := q.Len(ctx, "P")
			require.NoError(t, err)
			assert.Equal(t, 3, queued+inflight)
			held, err := q.InFlight(ctx, "P")
			require.NoError(t, err)
			for id, f := range held {
				assert.Equal(t, "e1", f.Executor, id)
			}
		})
	}
}

func TestRedisPushOfTenThousandIsOneScriptCall(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	client, trips := srv.CountingClient()
	q := NewRedis(client, RedisOptions{Prefix: "big:"})
	require.NoError(t, q.Push(ctx, "warm-up", Limits{MaxConcurrency: 1}, []string{"A"})) // loads the script

	many := make([]string, 10000)
	for i := range many {
		many[i] = fmt.Sprintf("task-%05d", i)
	}
	before := trips.Count()
	require.NoError(t, q.Push(ctx, "P", Limits{MaxConcurrency: 3}, many))
	assert.EqualValues(t, 2, trips.Count()-before, "the script, then the active set's SADD")
	requireLen(t, q, "P", 10000, 0)
	assert.Equal(t, []string{"task-00000", "task-00001", "task-00002"}, claimAll(t, q, "P", "e1"))

	// Past a batch: split, order kept.
	more := make([]string, pushBatch+5)
	for i := range more {
		more[i] = fmt.Sprintf("more-%05d", i)
	}
	require.NoError(t, q.Push(ctx, "Q", Limits{MaxConcurrency: 1}, more))
	requireLen(t, q, "Q", len(more), 0)
	drained, err := q.Drain(ctx, "Q")
	require.NoError(t, err)
	assert.Equal(t, more, drained)
}

func TestRedisLayout(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	client := srv.Client()
	q := NewRedis(client, RedisOptions{})
	keys := rediskey.New("")
	require.NoError(t, q.Push(ctx, "P", Limits{MaxConcurrency: 4, StartRate: 30, FailureBudget: 2}, []string{"A", "B", "C"}))
	before := time.Now()
	claim(t, q, "P", "web-1")

	for key, want := range map[string]string{
		keys.DispatchQueue("P"):    "zset",
		keys.DispatchInFlight("P"): "hash",
		keys.Dispatch("P"):         "hash",
		keys.Dispatching():         "set",
	} {
		typ, err := client.Type(ctx, key).Result()
		require.NoError(t, err)
		assert.Equal(t, want, typ, key)
	}
	v, err := client.HGet(ctx, keys.DispatchInFlight("P"), "A").Result()
	require.NoError(t, err)
	name, ms, ok := strings.Cut(v, "|")
	require.True(t, ok, v)
	assert.Equal(t, "web-1", name)
	var claimed int64
	_, err = fmt.Sscan(ms, &claimed)
	require.NoError(t, err)
	assert.InDelta(t, before.UnixMilli(), claimed, 2000, "Redis's clock, in ms")
	queue, err := client.ZRangeWithScores(ctx, keys.DispatchQueue("P"), 0, -1).Result()
	require.NoError(t, err)
	assert.Equal(t, []redis.Z{{Score: 2, Member: "B"}, {Score: 3, Member: "C"}}, queue, "scored by position")
	require.NoError(t, q.Return(ctx, "P", "A"))
	queue, err = client.ZRangeWithScores(ctx, keys.DispatchQueue("P"), 0, -1).Result()
	require.NoError(t, err)
	assert.Equal(t, []redis.Z{{Score: 1, Member: "A"}, {Score: 2, Member: "B"}, {Score: 3, Member: "C"}}, queue,
		"returned in front: the lowest score minus one")
	meta, err := client.HGetAll(ctx, keys.Dispatch("P")).Result()
	require.NoError(t, err)
	assert.Equal(t, "4", meta["limit"])
	assert.Equal(t, "30", meta["rate"])
	assert.Equal(t, "2", meta["budget"])
	assert.Equal(t, "3", meta["seq"])
	assert.NotEmpty(t, meta["next"])
	members, err := client.SMembers(ctx, keys.Dispatching()).Result()
	require.NoError(t, err)
	assert.Equal(t, []string{"P"}, members)
	require.NoError(t, q.Close(ctx, "P"))
	n, err := client.Exists(ctx, keys.DispatchQueue("P"), keys.Dispatch("P"), keys.Dispatching()).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(3), n, "a plan with queued tasks is not forgotten")
	_, err = q.Drain(ctx, "P")
	require.NoError(t, err)
	require.NoError(t, q.Close(ctx, "P"))
	n, err = client.Exists(ctx, keys.DispatchQueue("P"), keys.DispatchInFlight("P"), keys.Dispatch("P"), keys.Dispatching()).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "every key gone")
}

// Not parallel: the goroutine counts are the whole process's.
func TestRedisStopLeaksNoGoroutines(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	client := srv.Client()
	require.NoError(t, client.Ping(ctx).Err())
	before := redistest.SettledGoroutines(t)
	a, b := NewRedis(client, RedisOptions{Prefix: "leak:"}), NewRedis(client, RedisOptions{Prefix: "leak:"})
	require.NoError(t, a.Start(ctx))
	require.NoError(t, b.Start(ctx))
	require.NoError(t, a.Start(ctx)) // a second Start does nothing
	drainWoken(b)
	require.NoError(t, a.Push(ctx, "P", Limits{MaxConcurrency: 1}, []string{"A"}))
	requireWoken(t, b, "push")
	for _, q := range []*Redis{a, b} {
		require.NoError(t, q.Stop(ctx))
		require.NoError(t, q.Stop(ctx)) // idempotent
	}
	require.NoError(t, NewRedis(client, RedisOptions{}).Stop(ctx)) // never started
	redistest.RequireGoroutinesBackTo(t, before)
}

func TestRedisStartWithRedisAwayReturnsAndWakesOnceSubscribed(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	srv.Kill()
	client := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = client.Close() })
	q := NewRedis(client, RedisOptions{Prefix: "away:", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	startCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	require.NoError(t, q.Start(startCtx))
	assert.Less(t, time.Since(start), 3*time.Second, "Start does not wait for Redis")
	t.Cleanup(func() { require.NoError(t, q.Stop(context.Background())) })
	srv.Restart()
	// The late subscription is a wake-up: messages may have been missed meanwhile.
	requireWoken(t, q, "subscribed")
	drainWoken(q)
	other := NewRedis(srv.Client(), RedisOptions{Prefix: "away:"})
	require.NoError(t, other.Push(ctx, "P", Limits{MaxConcurrency: 1}, []string{"A"}))
	requireWoken(t, q, "push by another executor")
}

func TestRedisPlansNeverPrunesAPlanWhosePushRaced(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	pusher, pruner := newRedis(t, srv.Client(), "prune:"), newRedis(t, srv.Client(), "prune:")
	const n = 100
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("P%03d", i)
		// Active, with nothing queued: the next Plans would prune it.
		require.NoError(t, pusher.Push(ctx, want[i], Limits{MaxConcurrency: 1}, []string{"A"}))
		_, err := pusher.Drain(ctx, want[i])
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, err := pruner.Plans(ctx)
			assert.NoError(t, err)
		}
	}()
	for _, id := range want {
		require.NoError(t, pusher.Push(ctx, id, Limits{MaxConcurrency: 1}, []string{"B"}))
	}
	close(stop)
	wg.Wait()
	members, err := srv.Client().SMembers(ctx, rediskey.New("prune:").Dispatching()).Result()
	require.NoError(t, err)
	assert.ElementsMatch(t, want, members, "every plan with work is active")
}

// A plan pruned from executor:dispatching while a push raced it is put back by the second
// look at its keys; when that look fails (here: every EXISTS after the SREM is dropped on the
// wire, a connection reset), the plan is remembered and put back by the next Plans, so its
// queued task is claimed: no plan with work stays where no executor looks.
func TestRedisPlansPutsBackAPlanPrunedInDoubt(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	const prefix = "doubt:"
	direct := NewRedis(srv.Client(), RedisOptions{Prefix: prefix})
	require.NoError(t, direct.Push(ctx, "P", Limits{MaxConcurrency: 1}, []string{"A"}))
	_, err := direct.Drain(ctx, "P") // active, with nothing queued: the next Plans prunes it
	require.NoError(t, err)

	var pruned, failing atomic.Bool
	proxy := srv.NewFaultProxy(redistest.Faults{Rule: func(chunk []byte) redistest.Fault {
		chunk = bytes.ToUpper(chunk) // go-redis sends command names in lower case
		switch {
		case bytes.Contains(chunk, []byte("SREM")) && pruned.CompareAndSwap(false, true):
			// The push lands between the first look (idle) and the SREM.
			require.NoError(t, direct.Push(ctx, "P", Limits{MaxConcurrency: 1}, []string{"B"}))
			failing.Store(true)
		case bytes.Contains(chunk, []byte("EXISTS")) && failing.Load():
			return redistest.Fault{Kind: redistest.Drop}
		}
		return redistest.Fault{Kind: redistest.Pass}
	}})
	proxy.Inject(true)
	client := redis.NewClient(&redis.Options{Addr: proxy.Addr(), MaxRetries: 1})
	t.Cleanup(func() { _ = client.Close() })
	pruner := NewRedis(client, RedisOptions{Prefix: prefix})

	_, err = pruner.Plans(ctx)
	require.Error(t, err, "the second look failed")
	require.True(t, pruned.Load())
	members, err := srv.Client().SMembers(ctx, rediskey.New(prefix).Dispatching()).Result()
	require.NoError(t, err)
	require.NotContains(t, members, "P", "the SREM landed: P, with work, is out of the set")

	failing.Store(false)
	active, err := pruner.Plans(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"P"}, active, "the plan pruned in doubt is back")
	members, err = srv.Client().SMembers(ctx, rediskey.New(prefix).Dispatching()).Result()
	require.NoError(t, err)
	require.Contains(t, members, "P")
	require.Equal(t, "B", claim(t, direct, "P", "exec-a"), "its queued task is claimed")
}
