package dispatch

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
)

// newPair returns two handles on one dispatch queue, as two executors see it: for Memory the
// same value twice (one process), for Redis two started values on two clients of one server
// under a key prefix of the test's own.
type newPair func(t *testing.T) (a, b dispatcher)

func TestMemoryContract(t *testing.T) {
	t.Parallel()
	runContract(t, func(t *testing.T) (dispatcher, dispatcher) {
		t.Helper()
		m := NewMemory(MemoryOptions{})
		return m, m
	})
}

func TestRedisContract(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	runContract(t, func(t *testing.T) (dispatcher, dispatcher) {
		t.Helper()
		opts := RedisOptions{Prefix: "contract:" + t.Name() + ":"}
		a, b := NewRedis(srv.Client(), opts), NewRedis(srv.Client(), opts)
		for _, r := range []*Redis{a, b} {
			require.NoError(t, r.Start(context.Background()))
			t.Cleanup(func() { require.NoError(t, r.Stop(context.Background())) })
		}
		return a, b
	})
}

// The Redis contract on a Redis Cluster of three masters: each plan's queue, in-flight hash and
// limits share a slot (every script touches that one slot), the set of dispatching plans and
// the wake channel live elsewhere.
func TestRedisClusterContract(t *testing.T) {
	t.Parallel()
	client := redistest.StartCluster(t, 3, 0).Client()
	runContract(t, func(t *testing.T) (dispatcher, dispatcher) {
		t.Helper()
		opts := RedisOptions{Prefix: "contract:" + t.Name() + ":"}
		a, b := NewRedis(client, opts), NewRedis(client, opts)
		for _, r := range []*Redis{a, b} {
			require.NoError(t, r.Start(context.Background()))
			t.Cleanup(func() { require.NoError(t, r.Stop(context.Background())) })
		}
		return a, b
	})
}

// runContract runs the behaviour both implementations share.
func runContract(t *testing.T, pair newPair) {
	t.Helper()
	ctx := context.Background()
	wide := Limits{MaxConcurrency: 100}

	t.Run("claims follow push order", func(t *testing.T) {
		t.Parallel()
		a, b := pair(t)
		require.NoError(t, a.Push(ctx, "P", wide, []string{"A", "B", "C"}))
		require.NoError(t, b.Push(ctx, "P", wide, []string{"D", "E"}))
		assert.Equal(t, "A", claim(t, b, "P", "e2"))
		assert.Equal(t, []string{"B", "C", "D", "E"}, claimAll(t, a, "P", "e1"))
		claimNone(t, b, "P")
		claimNone(t, a, "never pushed")
	})

	t.Run("push leaves out ids queued or in flight", func(t *testing.T) {
		t.Parallel()
		a, b := pair(t)
		require.NoError(t, a.Push(ctx, "P", wide, []string{"A", "B"}))
		assert.Equal(t, "A", claim(t, a, "P", "e1"))
		require.NoError(t, b.Push(ctx, "P", wide, []string{"A", "B", "C", "C"}))
		requireLen(t, a, "P", 2, 1)
		assert.Equal(t, []string{"B", "C"}, claimAll(t, b, "P", "e2"))
		// Once done, an id may be queued again.
		_, _, err := a.Done(ctx, "P", "A", false)
		require.NoError(t, err)
		require.NoError(t, a.Push(ctx, "P", wide, []string{"A"}))
		requireLen(t, a, "P", 1, 2)
	})

	t.Run("max concurrency is never exceeded", func(t *testing.T) {
		t.Parallel()
		a, b := pair(t)
		require.NoError(t, a.Push(ctx, "P", Limits{MaxConcurrency: 2}, ids(5)))
		claim(t, a, "P", "e1")
		second := claim(t, b, "P", "e2")
		claimNone(t, a, "P")
		claimNone(t, b, "P")
		_, left, err := a.Done(ctx, "P", second, false)
		require.NoError(t, err)
		assert.Equal(t, 4, left)
		claim(t, b, "P", "e2")
		claimNone(t, a, "P")
		// A push with a higher limit raises it at once.
		require.NoError(t, b.Push(ctx, "P", Limits{MaxConcurrency: 3}, nil))
		claim(t, a, "P", "e1")
		claimNone(t, a, "P")
	})

	t.Run("done claims the next task for the worker when the plan lets it start", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name   string
			lim    Limits
			paused bool
			failed bool
			want   string // claimed by DoneClaim ("": nothing)
		}{
			{"the front task", Limits{MaxConcurrency: 2}, false, false, "C"},
			{"after a failure too", Limits{MaxConcurrency: 2}, false, true, "C"},
			{"nothing while paused", Limits{MaxConcurrency: 2}, true, false, ""},
			{"nothing when paced: the dispatch loop keeps the pace", Limits{MaxConcurrency: 2, StartRate: 6000}, false, false, ""},
			{"nothing once the failure budget emptied the queue", Limits{MaxConcurrency: 2, FailureBudget: 1}, false, true, ""},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				a, b := pair(t)
				require.NoError(t, a.Push(ctx, "P", tc.lim, []string{"A", "B", "C", "D"}))
				first := claim(t, a, "P", "e1")
				if tc.lim.StartRate > 0 { // the second start waits for the pace: queue it by hand
					require.Eventually(t, func() bool {
						ids, _, err := b.ClaimN(ctx, "P", "e2", 1)
						return err == nil && len(ids) == 1
					}, waitFor, time.Millisecond)
				} else {
					claim(t, b, "P", "e2")
				}
				require.NoError(t, a.SetPaused(ctx, "P", tc.paused))
				_, left, next, err := a.DoneClaim(ctx, "P", first, tc.failed, "e1")
				require.NoError(t, err)
				assert.Equal(t, tc.want, next)
				in, err := b.InFlight(ctx, "P")
				require.NoError(t, err)
				assert.NotContains(t, in, first)
				if tc.want != "" {
					assert.Equal(t, "e1", in[tc.want].Executor, "claimed for the worker's executor")
					assert.Len(t, in, 2, "the limit holds")
				}
				queued, claimed, err := b.Len(ctx, "P")
				require.NoError(t, err)
				assert.Equal(t, queued+claimed, left)
				// Repeated, it frees nothing and claims nothing more.
				_, _, again, err := a.DoneClaim(ctx, "P", first, tc.failed, "e1")
				require.NoError(t, err)
				assert.Empty(t, again)
			})
		}
	})

	t.Run("done claims nothing beyond the plan's limit", func(t *testing.T) {
		t.Parallel()
		a, b := pair(t)
		require.NoError(t, a.Push(ctx, "P", Limits{MaxConcurrency: 2}, []string{"A", "B", "C"}))
		claim(t, a, "P", "e1")
		claim(t, b, "P", "e2")
		require.NoError(t, b.Push(ctx, "P", Limits{MaxConcurrency: 1}, nil)) // lowered: 2 in flight, 1 allowed
		_, _, next, err := a.DoneClaim(ctx, "P", "A", false, "e1")
		require.NoError(t, err)
		assert.Empty(t, next, "one still in flight: the limit is reached")
		_, _, next, err = b.DoneClaim(ctx, "P", "B", false, "e2")
		require.NoError(t, err)
		assert.Equal(t, "C", next)
	})

	t.Run("return goes to the front and frees the slot", func(t *testing.T) {
		t.Parallel()
		a, b := pair(t)
		require.NoError(t, a.Push(ctx, "P", Limits{MaxConcurrency: 1}, []string{"A", "B", "C"}))
		assert.Equal(t, "A", claim(t, a, "P", "e1"))
		claimNone(t, b, "P")
		require.NoError(t, a.Return(ctx, "P", "A"))
		requireLen(t, b, "P", 3, 0)
		assert.Equal(t, "A", claim(t, b, "P", "e2"), "claimed again first")
		require.NoError(t, b.Return(ctx, "P", "A"))
		require.NoError(t, b.Return(ctx, "P", "A"), "a repeated return queues it once")
		require.NoError(t, b.Return(ctx, "P", "never claimed"))
		requireLen(t, a, "P", 3, 0)
		assert.Equal(t, []string{"A"}, []string{claim(t, a, "P", "e1")})
		_, _, err := a.Done(ctx, "P", "A", false)
		require.NoError(t, err)
		assert.Equal(t, "B", claim(t, a, "P", "e1"))
		_, _, err = a.Done(ctx, "P", "B", false)
		require.NoError(t, err)
		assert.Equal(t, "C", claim(t, a, "P", "e1"))
		require.NoError(t, a.Return(ctx, "P", "C"), "back into an empty queue")
		assert.Equal(t, "C", claim(t, a, "P", "e1"))
	})

	t.Run("done", func(t *testing.T) {
		t.Parallel()
		type step struct {
			id          string
			failed      bool
			wantDrained []string
			wantLeft    int
		}
		tests := []struct {
			name   string
			budget int
			steps  []step
		}{
			{"the failure that reaches the budget drains the rest in order", 2, []step{
				{"T000", true, nil, 5},
				{"T000", true, nil, 5}, // not in flight any more: counts nothing
				{"T001", false, nil, 4},
				{"T002", true, []string{"T003", "T004", "T005"}, 0},
				{"T002", true, nil, 0},
			}},
			{"no budget never drains", 0, []step{
				{"T000", true, nil, 5},
				{"T001", true, nil, 4},
				{"T002", true, nil, 3},
			}},
			{"successes never count", 1, []step{
				{"T000", false, nil, 5},
				{"T001", false, nil, 4},
				{"T002", true, []string{"T003", "T004", "T005"}, 0},
			}},
			{"a done for a task never claimed counts nothing", 1, []step{
				{"T004", true, nil, 6},
				{"T000", false, nil, 5},
			}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				a, b := pair(t)
				require.NoError(t, a.Push(ctx, "P", Limits{MaxConcurrency: 3, FailureBudget: tc.budget}, ids(6)))
				assert.Equal(t, []string{"T000", "T001", "T002"}, claimAll(t, a, "P", "e1"))
				for i, s := range tc.steps {
					drained, left, err := b.Done(ctx, "P", s.id, s.failed)
					require.NoError(t, err)
					assert.Equal(t, s.wantDrained, drained, "step %d: drained", i)
					assert.Equal(t, s.wantLeft, left, "step %d: left", i)
				}
			})
		}
	})

	t.Run("pause and unpause", func(t *testing.T) {
		t.Parallel()
		a, b := pair(t)
		require.NoError(t, a.SetPaused(ctx, "P", true), "a plan may be paused before its first push")
		require.NoError(t, a.Push(ctx, "P", wide, ids(2)))
		claimNone(t, b, "P")
		drainWoken(b)
		require.NoError(t, a.SetPaused(ctx, "P", false))
		requireWoken(t, b, "unpause")
		assert.Equal(t, "T000", claim(t, b, "P", "e2"))
		require.NoError(t, b.SetPaused(ctx, "P", true))
		claimNone(t, a, "P")
		requireLen(t, a, "P", 1, 1)
	})

	t.Run("remove", func(t *testing.T) {
		t.Parallel()
		a, b := pair(t)
		require.NoError(t, a.Push(ctx, "P", wide, []string{"A", "B", "C", "D", "E"}))
		assert.Equal(t, "A", claim(t, a, "P", "e1"))
		removed, err := b.Remove(ctx, "P", []string{"D", "X", "B", "A"})
		require.NoError(t, err)
		assert.Equal(t, []string{"D", "B"}, removed, "those that were queued, in the given order")
		removed, err = b.Remove(ctx, "P", []string{"D"})
		require.NoError(t, err)
		assert.Empty(t, removed)
		requireLen(t, a, "P", 2, 1)
		assert.Equal(t, []string{"C", "E"}, claimAll(t, a, "P", "e1"))
	})

	t.Run("drain", func(t *testing.T) {
		t.Parallel()
		a, b := pair(t)
		require.NoError(t, a.Push(ctx, "P", wide, []string{"C", "A", "B"}))
		assert.Equal(t, "C", claim(t, a, "P", "e1"))
		require.NoError(t, a.Push(ctx, "P", wide, []string{"D"}))
		require.NoError(t, a.Return(ctx, "P", "C"))
		drained, err := b.Drain(ctx, "P")
		require.NoError(t, err)
		assert.Equal(t, []string{"C", "A", "B", "D"}, drained)
		requireLen(t, a, "P", 0, 0)
		drained, err = b.Drain(ctx, "P")
		require.NoError(t, err)
		assert.Empty(t, drained)
		drained, err = b.Drain(ctx, "never pushed")
		require.NoError(t, err)
		assert.Empty(t, drained)
	})

	t.Run("release frees the slot without requeueing or counting", func(t *testing.T) {
		t.Parallel()
		a, b := pair(t)
		require.NoError(t, a.Push(ctx, "P", Limits{MaxConcurrency: 1, FailureBudget: 1}, []string{"A", "B"}))
		assert.Equal(t, "A", claim(t, a, "P", "e1"))
		claimNone(t, b, "P")
		ok, err := b.Release(ctx, "P", "A")
		require.NoError(t, err)
		assert.True(t, ok, "it was in flight")
		ok, err = b.Release(ctx, "P", "A")
		require.NoError(t, err)
		assert.False(t, ok, "not any more")
		requireLen(t, a, "P", 1, 0)
		drained, left, err := a.Done(ctx, "P", "A", true)
		require.NoError(t, err)
		assert.Empty(t, drained, "a released task's failure counts nothing")
		assert.Equal(t, 1, left)
		assert.Equal(t, "B", claim(t, b, "P", "e2"))
	})

	t.Run("in flight names the executor and the claim time", func(t *testing.T) {
		t.Parallel()
		a, b := pair(t)
		require.NoError(t, a.Push(ctx, "P", wide, []string{"A", "B", "C"}))
		before := time.Now()
		claim(t, a, "P", "e1")
		claim(t, b, "P", "exec|with|bars")
		after := time.Now()
		got, err := b.InFlight(ctx, "P")
		require.NoError(t, err)
		require.Len(t, got, 2)
		assert.Equal(t, "e1", got["A"].Executor)
		assert.Equal(t, "exec|with|bars", got["B"].Executor)
		for id, f := range got {
			// Redis's clock, to the millisecond: the same machine's, give or take.
			assert.WithinRange(t, f.Since, before.Add(-time.Second), after.Add(time.Second), id)
		}
		empty, err := a.InFlight(ctx, "never pushed")
		require.NoError(t, err)
		assert.Empty(t, empty)
		requireLen(t, a, "P", 1, 2)
		requireLen(t, a, "never pushed", 0, 0)
	})

	t.Run("plans lists those with work and prunes the rest", func(t *testing.T) {
		t.Parallel()
		a, b := pair(t)
		plans, err := a.Plans(ctx)
		require.NoError(t, err)
		assert.Empty(t, plans)
		require.NoError(t, a.Push(ctx, "queued", wide, []string{"A"}))
		require.NoError(t, a.Push(ctx, "in flight", wide, []string{"A"}))
		claim(t, a, "in flight", "e1")
		require.NoError(t, a.Push(ctx, "drained", wide, []string{"A"}))
		_, err = a.Drain(ctx, "drained")
		require.NoError(t, err)
		require.NoError(t, a.Push(ctx, "done", wide, []string{"A"}))
		claim(t, a, "done", "e1")
		_, _, err = a.Done(ctx, "done", "A", false)
		require.NoError(t, err)
		require.NoError(t, a.Push(ctx, "empty push", wide, nil))
		for range 2 {
			plans, err = b.Plans(ctx)
			require.NoError(t, err)
			assert.Equal(t, []string{"in flight", "queued"}, plans)
		}
		require.NoError(t, a.Push(ctx, "drained", wide, []string{"B"}))
		plans, err = b.Plans(ctx)
		require.NoError(t, err)
		assert.Equal(t, []string{"drained", "in flight", "queued"}, plans, "active again after a push")
	})

	t.Run("claimN takes what the limits allow in one go", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name   string
			lim    Limits
			n      int
			want   []string
			queued int
		}{
			{"fewer than asked: the free slots", Limits{MaxConcurrency: 3}, 10, []string{"T000", "T001", "T002"}, 2},
			{"fewer than asked: the queue", Limits{MaxConcurrency: 10}, 10, []string{"T000", "T001", "T002", "T003", "T004"}, 0},
			{"as many as asked", Limits{MaxConcurrency: 10}, 2, []string{"T000", "T001"}, 3},
			{"one at a time when paced", Limits{MaxConcurrency: 10, StartRate: 60}, 5, []string{"T000"}, 4},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				a, b := pair(t)
				require.NoError(t, a.Push(ctx, "P", tc.lim, ids(5)))
				got, wait, err := b.ClaimN(ctx, "P", "e1", tc.n)
				require.NoError(t, err)
				assert.Zero(t, wait)
				assert.Equal(t, tc.want, got)
				requireLen(t, a, "P", tc.queued, len(tc.want))
				inflight, err := a.InFlight(ctx, "P")
				require.NoError(t, err)
				for _, id := range got {
					assert.Equal(t, "e1", inflight[id].Executor, id)
				}
			})
		}
	})

	t.Run("an id pushed while in flight is queued when its claim ends", func(t *testing.T) {
		t.Parallel()
		cases := []struct {
			name string
			end  func(q queue) error
		}{
			{"done", func(q queue) error { _, _, err := q.Done(ctx, "P", "A", false); return err }},
			{"release", func(q queue) error { _, err := q.Release(ctx, "P", "A"); return err }},
			{"return", func(q queue) error { return q.Return(ctx, "P", "A") }},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				a, b := pair(t)
				require.NoError(t, a.Push(ctx, "P", Limits{MaxConcurrency: 2}, []string{"A", "B"}))
				require.Equal(t, "A", claim(t, a, "P", "e1"))
				require.NoError(t, b.Push(ctx, "P", Limits{MaxConcurrency: 2}, []string{"A"}), "a retry while the run winds down")
				requireLen(t, a, "P", 1, 1)
				require.NoError(t, tc.end(b))
				requireLen(t, a, "P", 2, 0)
				ids, err := a.Drain(ctx, "P")
				require.NoError(t, err)
				assert.ElementsMatch(t, []string{"A", "B"}, ids, "queued once")
			})
		}
	})

	t.Run("close forgets an idle plan, not one with work", func(t *testing.T) {
		t.Parallel()
		a, b := pair(t)
		require.NoError(t, a.Push(ctx, "P", Limits{MaxConcurrency: 1, FailureBudget: 1}, []string{"A", "B"}))
		claim(t, a, "P", "e1")
		require.NoError(t, b.Close(ctx, "P"), "a retry pushed after the plan was settled")
		requireLen(t, a, "P", 1, 1)
		_, _, err := a.Done(ctx, "P", "A", false)
		require.NoError(t, err)
		_, err = a.Drain(ctx, "P")
		require.NoError(t, err)
		require.NoError(t, a.SetPaused(ctx, "P", true))
		require.NoError(t, b.Close(ctx, "P"))
		requireLen(t, a, "P", 0, 0)
		plans, err := a.Plans(ctx)
		require.NoError(t, err)
		assert.Empty(t, plans)
		require.NoError(t, b.Close(ctx, "P"), "closing again is fine")
		// A new push starts afresh: not paused.
		require.NoError(t, a.Push(ctx, "P", Limits{MaxConcurrency: 1}, []string{"C"}))
		assert.Equal(t, "C", claim(t, b, "P", "e2"))
	})

	t.Run("start rate paces the starts plan-wide", func(t *testing.T) {
		t.Parallel()
		a, b := pair(t)
		require.NoError(t, a.Push(ctx, "P", Limits{MaxConcurrency: 10, StartRate: 60}, ids(3)))
		assert.Equal(t, "T000", claim(t, a, "P", "e1"), "the first start is immediate")
		for _, d := range []dispatcher{a, b} {
			id, wait, err := d.Claim(ctx, "P", "e2")
			require.NoError(t, err)
			assert.Empty(t, id)
			// One start a second: the wait is about a second (loosely: a busy machine).
			assert.Greater(t, wait, 500*time.Millisecond)
			assert.LessOrEqual(t, wait, time.Second)
		}
		requireLen(t, a, "P", 2, 1)
	})

	t.Run("a paced start is claimable after its wait", func(t *testing.T) {
		t.Parallel()
		a, b := pair(t)
		require.NoError(t, a.Push(ctx, "P", Limits{MaxConcurrency: 10, StartRate: 1200}, ids(2)))
		start := time.Now()
		claim(t, a, "P", "e1")
		id, wait, err := b.Claim(ctx, "P", "e2")
		require.NoError(t, err)
		require.Empty(t, id)
		require.Positive(t, wait)
		assert.LessOrEqual(t, wait, 50*time.Millisecond)
		time.Sleep(wait)
		var got string
		require.Eventually(t, func() bool {
			got, _, err = b.Claim(ctx, "P", "e2")
			return err == nil && got != ""
		}, waitFor, tick)
		assert.Equal(t, "T001", got)
		assert.GreaterOrEqual(t, time.Since(start), 40*time.Millisecond, "not before its time (ms rounding aside)")
	})

	t.Run("woken after another executor's push and done", func(t *testing.T) {
		t.Parallel()
		a, b := pair(t)
		drainWoken(b)
		require.NoError(t, a.Push(ctx, "P", Limits{MaxConcurrency: 1}, ids(2)))
		requireWoken(t, b, "push")
		claim(t, a, "P", "e1")
		drainWoken(b)
		_, _, err := a.Done(ctx, "P", "T000", false)
		require.NoError(t, err)
		requireWoken(t, b, "done")
		claim(t, b, "P", "e2")
		drainWoken(b)
		require.NoError(t, a.Return(ctx, "P", "T001"))
		requireWoken(t, b, "return")
	})

	t.Run("invalid arguments are refused", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name string
			call func(d dispatcher) error
			want error
		}{
			{"empty plan id", func(d dispatcher) error { return d.Push(ctx, "", wide, nil) }, ErrEmptyID},
			{"empty task id", func(d dispatcher) error { return d.Push(ctx, "P", wide, []string{"A", ""}) }, ErrEmptyID},
			{"max concurrency 0", func(d dispatcher) error { return d.Push(ctx, "P", Limits{}, nil) }, ErrInvalidLimits},
			{"negative start rate", func(d dispatcher) error {
				return d.Push(ctx, "P", Limits{MaxConcurrency: 1, StartRate: -1}, nil)
			}, ErrInvalidLimits},
			{"negative failure budget", func(d dispatcher) error {
				return d.Push(ctx, "P", Limits{MaxConcurrency: 1, FailureBudget: -1}, nil)
			}, ErrInvalidLimits},
			{"claim without a plan", func(d dispatcher) error { _, _, err := d.Claim(ctx, "", "e1"); return err }, ErrEmptyID},
			{"done without a task", func(d dispatcher) error { _, _, err := d.Done(ctx, "P", "", false); return err }, ErrEmptyID},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				a, _ := pair(t)
				err := tc.call(a)
				require.ErrorIs(t, err, tc.want)
				assert.True(t, strings.HasPrefix(err.Error(), "dispatch: "), err.Error())
				requireLen(t, a, "P", 0, 0)
			})
		}
	})
}
