package memrepo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/infra/repotest"
)

var boundSpecs = repotest.NoopStages(2)

// newTasks makes a plan (not stored) of n tenants named prefix-i, with its tasks.
func newTasks(t *testing.T, prefix string, n int) (*plan.Plan, []*task.Task) {
	t.Helper()
	now := time.Now().UTC()
	planID := ulid.Make().String()
	tasks := make([]*task.Task, n)
	ids := make([]string, n)
	for i := range tasks {
		tk, err := task.New(planID, fmt.Sprintf("%s-%d", prefix, i), nil, boundSpecs, now)
		require.NoError(t, err)
		tasks[i], ids[i] = tk, tk.ID()
	}
	p, err := plan.New(plan.Draft{ID: planID, Name: prefix, Stages: boundSpecs, TaskIDs: ids}, now)
	require.NoError(t, err)
	return p, tasks
}

// complete runs tk's stages to its end as a run does, and returns its checkpoint.
func complete(t *testing.T, tk *task.Task) *checkpoint.Checkpoint {
	t.Helper()
	now := time.Now().UTC()
	require.NoError(t, tk.Start(1, now))
	cp := checkpoint.New(tk.ID())
	for i := range boundSpecs {
		require.NoError(t, repotest.CompleteStage(tk, cp, i, now))
	}
	require.NoError(t, tk.Complete(now))
	return cp
}

// held reports which of tasks the mirror holds (task, checkpoint and tenant index).
func held(t *testing.T, db *memrepo.DB, tasks []*task.Task) []bool {
	t.Helper()
	ctx := context.Background()
	out := make([]bool, len(tasks))
	for i, tk := range tasks {
		_, err := db.Tasks().Task(ctx, tk.ID())
		out[i] = err == nil
		if err != nil {
			require.ErrorIs(t, err, task.ErrNotFound)
			_, err = db.Checkpoints().Checkpoint(ctx, tk.ID())
			require.ErrorIs(t, err, checkpoint.ErrNotFound, "an evicted task's checkpoint goes with it")
			_, err = db.Tasks().Latest(ctx, tk.TenantID())
			require.ErrorIs(t, err, task.ErrNotFound, "an evicted task's tenant index goes with it")
		}
	}
	return out
}

func bools(n int, f func(i int) bool) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// Ended tasks this executor wrote leave the mirror beyond its bound, least recently stored
// first; the tasks it runs or accepted that have not ended stay, however many.
func TestMirrorEvictsEndedTasksBeyondItsBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := memrepo.NewMirror(memrepo.MirrorOptions{CacheTasks: 3})
	p, tasks := newTasks(t, "evict", 10)
	require.NoError(t, db.CreatePlan(ctx, p, tasks))
	assert.Equal(t, bools(10, func(int) bool { return true }), held(t, db, tasks), "active: all kept")

	for i, tk := range tasks[:8] {
		db.Tasks().Put(tk, complete(t, tk))
		require.Equal(t, bools(10, func(j int) bool { return j > i-3 }), held(t, db, tasks), "after %d ended", i+1)
	}
	for i := 8; i < 10; i++ {
		require.NoError(t, tasks[i].Start(1, time.Now()))
		db.Tasks().Put(tasks[i], nil) // RUNNING: kept
	}
	assert.Equal(t, bools(10, func(j int) bool { return j >= 5 }), held(t, db, tasks))
	got, err := db.Tasks().Task(ctx, tasks[7].ID())
	require.NoError(t, err)
	assert.Equal(t, tasks[7].State(), got.State())

	// The plan has not ended: its evicted tasks' statuses still answer (its settling reads
	// them), though the tasks are gone.
	statuses, err := db.Tasks().Statuses(ctx, p.TaskIDs())
	require.NoError(t, err)
	assert.Equal(t, []task.Status{task.Completed, task.Completed, task.Completed, task.Completed, task.Completed,
		task.Completed, task.Completed, task.Completed, task.Running, task.Running}, statuses)
	_, err = db.Tasks().ByIDs(ctx, p.TaskIDs())
	require.ErrorIs(t, err, task.ErrNotFound, "whole tasks are gone")

	// Once the plan ended (and was written), those statuses go, and the plan too: its 10 task
	// ids weigh more than the bound.
	for _, tk := range tasks[8:] {
		require.NoError(t, tk.Cancel(nil, time.Now()))
		db.Tasks().Put(tk, nil)
	}
	require.NoError(t, p.Start(time.Now()))
	require.NoError(t, p.Cancel(time.Now()))
	db.Plans().Put(p)
	_, err = db.Plans().Plan(ctx, p.ID())
	require.ErrorIs(t, err, plan.ErrNotFound)
	_, err = db.Tasks().Statuses(ctx, p.TaskIDs())
	require.ErrorIs(t, err, task.ErrNotFound)
}

// What the mirror keeps whatever the bound, and what it caches, by how it was stored.
func TestMirrorKeepsWhatTheExecutorNeeds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		store func(t *testing.T, db *memrepo.DB, tk *task.Task)
		kept  bool
	}{
		{"created, pending", func(t *testing.T, db *memrepo.DB, tk *task.Task) {
			require.NoError(t, db.Tasks().Create(ctx, []*task.Task{tk}))
		}, true},
		{"written, running", func(t *testing.T, db *memrepo.DB, tk *task.Task) {
			require.NoError(t, tk.Start(1, time.Now()))
			db.Tasks().Put(tk, nil)
		}, true},
		{"written, paused", func(t *testing.T, db *memrepo.DB, tk *task.Task) {
			require.NoError(t, tk.Start(1, time.Now()))
			require.NoError(t, tk.Pause(time.Now()))
			db.Tasks().Put(tk, nil)
		}, true},
		{"written, ended", func(t *testing.T, db *memrepo.DB, tk *task.Task) {
			db.Tasks().Put(tk, complete(t, tk))
		}, false},
		{"only read, pending", func(t *testing.T, db *memrepo.DB, tk *task.Task) {
			db.Tasks().PutIfNewer(tk)
		}, false},
		{"only read, running", func(t *testing.T, db *memrepo.DB, tk *task.Task) {
			require.NoError(t, tk.Start(1, time.Now()))
			db.Tasks().PutIfNewer(tk)
		}, false},
		{"written, then read ended", func(t *testing.T, db *memrepo.DB, tk *task.Task) {
			db.Tasks().Put(tk, nil)
			complete(t, tk)
			tk.Stored(tk.Version() + 1)
			db.Tasks().PutIfNewer(tk) // another executor ended it
		}, false},
		{"ended, pinned", func(t *testing.T, db *memrepo.DB, tk *task.Task) {
			db.Pin(nil, []string{tk.ID()})
			db.Tasks().Put(tk, complete(t, tk))
		}, true},
		{"pinned, changed on the mirror alone", func(t *testing.T, db *memrepo.DB, tk *task.Task) {
			db.Pin(nil, []string{tk.ID()}) // before the change: nothing of it goes meanwhile
			require.NoError(t, db.Tasks().Create(ctx, []*task.Task{tk}))
			_, err := db.Tasks().Update(ctx, tk.ID(), func(tk *task.Task) (*checkpoint.Checkpoint, error) {
				return complete(t, tk), nil
			})
			require.NoError(t, err)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := memrepo.NewMirror(memrepo.MirrorOptions{CacheTasks: 2})
			_, tasks := newTasks(t, "keep", 1)
			tc.store(t, db, tasks[0])
			// Fill the cache twice over with ended tasks of another plan.
			_, others := newTasks(t, "other", 4)
			for _, o := range others {
				db.Tasks().Put(o, complete(t, o))
			}
			assert.Equal(t, []bool{tc.kept}, held(t, db, tasks))
			assert.Equal(t, []bool{false, false, true, true}, held(t, db, others))
		})
	}
}

// A pinned aggregate stays until unpinned, then goes as its state allows.
func TestMirrorUnpinLetsWrittenAggregatesGo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := memrepo.NewMirror(memrepo.MirrorOptions{CacheTasks: 0})
	p, tasks := newTasks(t, "pin", 3)
	ids := p.TaskIDs()
	newPlans, newTasks := db.Pin([]string{p.ID()}, ids)
	assert.Equal(t, []string{p.ID()}, newPlans)
	assert.Equal(t, ids, newTasks)
	newPlans, newTasks = db.Pin([]string{p.ID()}, ids[:1])
	assert.Empty(t, newPlans, "pinned already")
	assert.Empty(t, newTasks, "pinned already")
	require.NoError(t, db.CreatePlan(ctx, p, tasks))
	require.NoError(t, p.Start(time.Now()))
	require.NoError(t, db.Plans().Save(ctx, p))
	for _, tk := range tasks[:2] {
		_, err := db.Tasks().Update(ctx, tk.ID(), func(tk *task.Task) (*checkpoint.Checkpoint, error) {
			return complete(t, tk), nil
		})
		require.NoError(t, err)
	}
	require.Equal(t, []bool{true, true, true}, held(t, db, tasks), "pinned: all kept")

	db.Unpin([]string{p.ID()}, ids)
	assert.Equal(t, []bool{false, false, true}, held(t, db, tasks), "written: the ended ones go (no cache), the pending one stays")
	_, err := db.Plans().Plan(ctx, p.ID())
	require.NoError(t, err, "a running plan this executor wrote stays")
}

// Cached entries go least recently stored first: a read back from the durable store counts
// as a use.
func TestMirrorCacheIsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	db := memrepo.NewMirror(memrepo.MirrorOptions{CacheTasks: 2})
	_, tasks := newTasks(t, "lru", 3)
	for _, tk := range tasks[:2] {
		db.Tasks().Put(tk, complete(t, tk))
	}
	db.Tasks().PutIfNewer(tasks[0]) // read again: now the most recent
	db.Tasks().Put(tasks[2], complete(t, tasks[2]))
	assert.Equal(t, []bool{true, false, true}, held(t, db, tasks))
}

// Plans: what this executor wrote and has not ended is kept; ended plans and plans only read
// are cached, weighed by their task lists; a read never undoes a newer write.
func TestMirrorBoundsPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := memrepo.NewMirror(memrepo.MirrorOptions{CacheTasks: 4})
	running, _ := newTasks(t, "running", 5) // weighs 6: more than the bound
	require.NoError(t, running.Start(time.Now()))
	db.Plans().Put(running)
	small := make([]*plan.Plan, 3)
	for i := range small {
		small[i], _ = newTasks(t, fmt.Sprintf("small%d", i), 1) // weighs 2
		db.Plans().PutIfNewer(small[i])                         // only read
	}
	has := func(p *plan.Plan) bool {
		_, err := db.Plans().Plan(ctx, p.ID())
		return err == nil
	}
	assert.True(t, has(running), "kept")
	assert.Equal(t, []bool{false, true, true}, []bool{has(small[0]), has(small[1]), has(small[2])})
	listed, err := db.Plans().List(ctx, plan.Filter{})
	require.NoError(t, err)
	assert.Len(t, listed, 3)

	older := small[2].Clone()
	require.NoError(t, small[2].Start(time.Now()))
	small[2].Stored(small[2].Version() + 1)
	db.Plans().Put(small[2])
	kept := db.Plans().PutIfNewer(older)
	assert.Equal(t, plan.Running, kept.Status(), "a read of an older version keeps the newer")
	got, err := db.Plans().Plan(ctx, small[2].ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Running, got.Status())

	require.NoError(t, running.Complete(time.Now()))
	db.Plans().Put(running)
	assert.False(t, has(running), "ended and written: cached, and heavier than the bound")

	// A plan only read (another executor's) whose task this executor runs is kept with it.
	theirs, theirTasks := newTasks(t, "theirs", 1)
	db.Plans().PutIfNewer(theirs)
	require.NoError(t, theirTasks[0].Start(1, time.Now()))
	db.Tasks().Put(theirTasks[0], nil)
	for i := range 4 {
		other, _ := newTasks(t, fmt.Sprintf("filler%d", i), 1)
		db.Plans().PutIfNewer(other)
	}
	assert.True(t, has(theirs), "the plan of a task it runs")
}

// The tenant index and checkpoints of a bounded mirror name only tasks it holds.
func TestMirrorIndexesOnlyTasksItHolds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := memrepo.NewMirror(memrepo.MirrorOptions{CacheTasks: 0})
	_, tasks := newTasks(t, "index", 1)
	tk := tasks[0]
	cp := complete(t, tk)
	db.Tasks().PutLatest(tk.TenantID(), tk.ID())
	db.Checkpoints().PutIfNewer(cp)
	_, err := db.Tasks().Latest(ctx, tk.TenantID())
	require.ErrorIs(t, err, task.ErrNotFound)
	_, err = db.Checkpoints().Checkpoint(ctx, tk.ID())
	require.ErrorIs(t, err, checkpoint.ErrNotFound)
}

// The in-memory store (New) is the only copy: it keeps everything, pinned or not.
func TestNewKeepsEverything(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := memrepo.New()
	p, tasks := newTasks(t, "all", 50)
	require.NoError(t, db.CreatePlan(ctx, p, tasks))
	for _, tk := range tasks {
		db.Tasks().Put(tk, complete(t, tk))
	}
	newPlans, newTasks := db.Pin([]string{p.ID()}, p.TaskIDs())
	assert.Empty(t, newPlans)
	assert.Empty(t, newTasks)
	db.Unpin([]string{p.ID()}, p.TaskIDs())
	require.NoError(t, p.Start(time.Now()))
	require.NoError(t, p.Complete(time.Now()))
	db.Plans().Put(p)
	assert.Equal(t, bools(50, func(int) bool { return true }), held(t, db, tasks))
	_, err := db.Plans().Plan(ctx, p.ID())
	require.NoError(t, err)
}

// A plan ends once all its tasks did: when the mirror learns that a plan ended (another
// executor settled it), its copies of the plan's tasks that have not ended are stale, and only
// cached. A read never replaces a plan changed on the mirror alone (pinned).
func TestMirrorLetsTasksOfAnEndedPlanGo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := memrepo.NewMirror(memrepo.MirrorOptions{CacheTasks: 0})
	p, tasks := newTasks(t, "settled", 2)
	require.NoError(t, db.CreatePlan(ctx, p, tasks))
	require.Equal(t, []bool{true, true}, held(t, db, tasks))

	read := p.Clone()
	require.NoError(t, read.Start(time.Now()))
	require.NoError(t, read.Complete(time.Now()))
	read.Stored(read.Version() + 2)
	db.Pin([]string{p.ID()}, nil)
	kept := db.Plans().PutIfNewer(read)
	assert.Equal(t, plan.Pending, kept.Status(), "pinned: a read does not replace it")
	assert.Equal(t, []bool{true, true}, held(t, db, tasks))

	db.Unpin([]string{p.ID()}, nil)
	got := db.Plans().PutIfNewer(read)
	assert.Equal(t, plan.Completed, got.Status())
	assert.Equal(t, []bool{false, false}, held(t, db, tasks), "the plan ended: its tasks' copies are stale")
}

// A mirror of a store shared by executors (NoIndex) keeps the tasks and their plan, not the
// plan's index: its summary, rows and running set are a plan it does not index; a mirror of an
// executor alone keeps them (it answers from them while Redis is away).
func TestMirrorWithoutIndex(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		noIndex bool
	}{
		{name: "alone: indexed", noIndex: false},
		{name: "shared: no index", noIndex: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := memrepo.NewMirror(memrepo.MirrorOptions{CacheTasks: 10, NoIndex: tt.noIndex})
			p, tasks := newTasks(t, "noindex", 3)
			require.NoError(t, db.CreatePlan(ctx, p, tasks))
			require.NoError(t, tasks[0].Start(1, time.Now().UTC()))
			db.Tasks().Put(tasks[0], nil)
			assert.Equal(t, []bool{true, true, true}, held(t, db, tasks), "the tasks are held either way")

			rows, err := db.Tasks().Rows(ctx, p.ID())
			require.NoError(t, err)
			running, err := db.Tasks().Running(ctx, p.ID())
			require.NoError(t, err)
			sum, err := db.Tasks().Summary(ctx, p.ID())
			require.NoError(t, err)
			if tt.noIndex {
				assert.Empty(t, rows)
				assert.Empty(t, running)
				assert.Zero(t, sum.Total)
				return
			}
			assert.Len(t, rows, 3)
			assert.Equal(t, []string{tasks[0].ID()}, running)
			assert.Equal(t, 3, sum.Total)
		})
	}
}
