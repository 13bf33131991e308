package memrepo_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/infra/repotest"
)

// retention is the embedded store's retention in these tests: the fake clock makes it pass.
const retention = time.Hour

// fakeClock is a clock a test moves on by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// Now returns the clock's time.
func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock on by d.
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// newStore returns an embedded store with the test retention on clock.
func newStore(clock *fakeClock) *memrepo.DB {
	return memrepo.NewStore(memrepo.StoreOptions{Retention: retention, Clock: clock.Now})
}

// The retention part of the repository contract, on the fake clock.
func TestRetentionContract(t *testing.T) {
	t.Parallel()
	repotest.RunRetention(t, func(*testing.T) repotest.Retention {
		clock := newFakeClock()
		db := newStore(clock)
		return repotest.Retention{
			Store: repotest.Store{Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Index: db.Tasks(), Transcripts: db.Transcripts(), Audit: db.Audit()},
			TTL:   retention,
			Pass: func(t *testing.T, d time.Duration) {
				t.Helper()
				clock.Add(d)
				db.Sweep(t.Context())
			},
		}
	})
}

// storeEnded stores a plan of n tasks (tenants prefix-0 …), runs them to their end and ends
// the plan, all through the repositories as the executor writes them.
func storeEnded(t *testing.T, db *memrepo.DB, prefix string, n int) (*plan.Plan, []*task.Task) {
	t.Helper()
	ctx := t.Context()
	p, tasks := newTasks(t, prefix, n)
	require.NoError(t, db.CreatePlan(ctx, p, tasks))
	require.NoError(t, p.Start(time.Now()))
	require.NoError(t, db.Plans().Save(ctx, p))
	for _, tk := range tasks {
		cp := complete(t, tk)
		require.NoError(t, db.Tasks().Save(ctx, tk, cp))
		key := task.AttemptKey{StageIndex: 0, Run: 1, Attempt: 1}
		require.NoError(t, db.Transcripts().KeepTranscript(ctx, tk.ID(), key, stage.Transcript{Stdout: tk.TenantID()}))
	}
	require.NoError(t, p.Complete(time.Now()))
	require.NoError(t, db.Plans().Save(ctx, p))
	return p, tasks
}

// counted returns how many plans and tasks db holds, whatever their status.
func counted(db *memrepo.DB) (plans, tasks int) {
	ps, ts := db.StatusCounts()
	for _, n := range ps {
		plans += n
	}
	for _, n := range ts {
		tasks += n
	}
	return plans, tasks
}

// An ended plan is kept for the retention from its end, to the nanosecond, and forgotten
// with its tasks at the first sweep after.
func TestStoreForgetsAnEndedPlanAfterItsRetention(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		after time.Duration
		kept  bool
	}{
		{"just before the retention", retention - time.Nanosecond, true},
		{"at the retention", retention, false},
		{"long after", 10 * retention, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clock := newFakeClock()
			db := newStore(clock)
			p, tasks := storeEnded(t, db, "ended", 3)
			clock.Add(tt.after)
			forgot := db.Sweep(t.Context())

			plans, stored := counted(db)
			_, err := db.Plans().Plan(t.Context(), p.ID())
			if tt.kept {
				require.NoError(t, err)
				assert.Zero(t, forgot)
				assert.Equal(t, []int{1, len(tasks)}, []int{plans, stored})
				return
			}
			require.ErrorIs(t, err, plan.ErrNotFound)
			assert.Equal(t, 1, forgot)
			assert.Equal(t, []int{0, 0}, []int{plans, stored}, "nothing of the plan is counted")
			assert.Zero(t, db.Sweep(t.Context()), "a plan is forgotten once")
		})
	}
}

// Every write of an ended plan gives it the retention anew, as each write of one to Redis
// sets its TTL again.
func TestStoreCountsTheRetentionFromTheLastEnd(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	db := newStore(clock)
	p, _ := storeEnded(t, db, "rewritten", 1)
	clock.Add(retention / 2)
	require.NoError(t, db.Plans().Save(t.Context(), p), "written ended again")

	clock.Add(retention / 2)
	assert.Zero(t, db.Sweep(t.Context()), "a retention after the first end, not after the last")
	_, err := db.Plans().Plan(t.Context(), p.ID())
	require.NoError(t, err)

	clock.Add(retention / 2)
	assert.Equal(t, 1, db.Sweep(t.Context()))
	_, err = db.Plans().Plan(t.Context(), p.ID())
	require.ErrorIs(t, err, plan.ErrNotFound)
}

// A plan of many tasks is forgotten in batches while the store is read; what another plan
// holds stays whole, also after the task maps were copied into smaller ones.
func TestStoreForgetsALargePlanWhileRead(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clock := newFakeClock()
	db := newStore(clock)
	big, bigTasks := storeEnded(t, db, "big", 4500)
	active, activeTasks := newTasks(t, "active", 5)
	require.NoError(t, db.CreatePlan(ctx, active, activeTasks))
	clock.Add(retention)

	reading, stop := make(chan error, 1), make(chan struct{})
	go func() {
		var err error
		for err == nil {
			select {
			case <-stop:
				reading <- nil
				return
			default:
			}
			_, err = db.Tasks().Latest(ctx, activeTasks[0].TenantID())
		}
		reading <- err
	}()
	assert.Equal(t, 1, db.Sweep(ctx))
	close(stop)
	require.NoError(t, <-reading, "the other plan's tasks are read throughout")

	plans, tasks := db.StatusCounts()
	assert.Equal(t, 1, plans[plan.Pending])
	assert.Equal(t, len(activeTasks), tasks[task.Pending])
	assert.Zero(t, tasks[task.Completed])
	for _, tk := range activeTasks {
		latest, err := db.Tasks().Latest(ctx, tk.TenantID())
		require.NoError(t, err)
		assert.Equal(t, tk.ID(), latest.ID())
	}
	for _, tk := range []*task.Task{bigTasks[0], bigTasks[len(bigTasks)/2], bigTasks[len(bigTasks)-1]} {
		_, err := db.Tasks().Latest(ctx, tk.TenantID())
		require.ErrorIs(t, err, task.ErrNotFound)
		outs, err := db.Transcripts().Transcripts(ctx, tk.ID())
		require.NoError(t, err)
		assert.Empty(t, outs)
	}
	sum, err := db.Tasks().Summary(ctx, big.ID())
	require.NoError(t, err)
	assert.Zero(t, sum.Total)
}

// A store without a retention, and the mirror behind Redis, forget nothing, and have no sweep
// to start.
func TestStoresWithoutRetentionKeepEverything(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		db   *memrepo.DB
	}{
		{"New", memrepo.New()},
		{"NewStore without a retention", memrepo.NewStore(memrepo.StoreOptions{Clock: newFakeClock().Now})},
		{"NewMirror", memrepo.NewMirror(memrepo.MirrorOptions{CacheTasks: 100})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.NoError(t, tt.db.Start(t.Context()))
			p, _ := storeEnded(t, tt.db, "kept", 2)
			assert.Zero(t, tt.db.Sweep(t.Context()))
			_, err := tt.db.Plans().Plan(t.Context(), p.ID())
			require.NoError(t, err)
			require.NoError(t, tt.db.Stop(t.Context()))
		})
	}
}

// Start runs the sweep in the background until Stop, which leaves no goroutine behind; a
// stopped store forgets nothing more. Not parallel: it counts the process's goroutines.
func TestStoreSweepsInTheBackgroundUntilStopped(t *testing.T) {
	clock := newFakeClock()
	db := memrepo.NewStore(memrepo.StoreOptions{Retention: retention, Clock: clock.Now, SweepEvery: time.Millisecond})
	before := redistest.SettledGoroutines(t)
	require.NoError(t, db.Start(t.Context()))
	require.NoError(t, db.Start(t.Context()), "a second Start does nothing")
	first, _ := storeEnded(t, db, "first", 2)
	clock.Add(retention)
	require.Eventually(t, func() bool {
		_, err := db.Plans().Plan(t.Context(), first.ID())
		return err != nil
	}, 5*time.Second, time.Millisecond, "the sweep forgets the plan")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, db.Stop(ctx))
	require.NoError(t, db.Stop(ctx), "Stop is idempotent")
	redistest.RequireGoroutinesBackTo(t, before)

	second, _ := storeEnded(t, db, "second", 1)
	clock.Add(retention)
	require.NoError(t, db.Start(t.Context()), "a stopped store does not start again")
	time.Sleep(20 * time.Millisecond) // twenty sweeps, had it started
	_, err := db.Plans().Plan(t.Context(), second.ID())
	require.NoError(t, err, "nothing is swept after Stop")
}

// heapInUse returns the bytes of live heap objects after a collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// A forgotten plan's memory goes back to the heap: its tasks, checkpoints, transcripts and
// index, and the room the store's maps had made for them. Not parallel: it measures the heap.
func TestStoreReleasesTheMemoryOfForgottenPlans(t *testing.T) {
	clock := newFakeClock()
	db := newStore(clock)
	empty := heapInUse()
	var ids []string
	for i := range 3 {
		p, _ := storeEnded(t, db, fmt.Sprintf("mem%d-%s", i, ulid.Make()), 5000)
		ids = append(ids, p.ID())
	}
	full := heapInUse()
	require.Greater(t, full-empty, int64(10<<20), "15,000 tasks take memory")

	clock.Add(retention)
	require.Equal(t, len(ids), db.Sweep(t.Context()))
	after := heapInUse()
	t.Logf("heap: %d KiB empty, %d KiB with 3 plans of 5,000 tasks, %d KiB once they were forgotten",
		empty>>10, full>>10, after>>10)
	assert.Less(t, after-empty, (full-empty)/100, "at most a hundredth of what the plans took is left")
	runtime.KeepAlive(db)
}
