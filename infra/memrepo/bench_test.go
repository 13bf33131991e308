package memrepo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/infra/repotest"
)

// benchSpecs is the 10-noop-stage template of the benchmarks' tasks.
var benchSpecs = repotest.NoopStages(10)

// benchDB is a store holding 10,000 PENDING tasks (a large plan's worth) and tk, a task of
// one more tenant that ran its 10 stages and completed, with its checkpoint cp; tk is stored
// as created (PENDING).
func benchDB(b *testing.B) (db *memrepo.DB, tk *task.Task, cp *checkpoint.Checkpoint) {
	b.Helper()
	return benchDBOn(b, memrepo.New())
}

// benchDBOn is benchDB on db.
func benchDBOn(b *testing.B, db *memrepo.DB) (_ *memrepo.DB, tk *task.Task, cp *checkpoint.Checkpoint) {
	b.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	planID := ulid.Make().String()
	tasks := make([]*task.Task, 10_000)
	for i := range tasks {
		var err error
		tasks[i], err = task.New(planID, fmt.Sprintf("t-%05d", i), nil, benchSpecs, now)
		require.NoError(b, err)
	}
	tk, err := task.New(planID, "bench-tenant", map[string]any{"region": "eu-west-1"}, benchSpecs, now)
	require.NoError(b, err)
	require.NoError(b, db.Tasks().Create(ctx, append(tasks, tk)))

	require.NoError(b, tk.Start(1, now))
	cp = checkpoint.New(tk.ID())
	for i := range benchSpecs {
		require.NoError(b, repotest.CompleteStage(tk, cp, i, now.Add(time.Duration(i+1)*time.Millisecond)))
	}
	require.NoError(b, tk.Complete(now.Add(time.Second)))
	return db, tk, cp
}

// requireStored checks that db holds tk and cp as they are.
func requireStored(b *testing.B, db *memrepo.DB, tk *task.Task, cp *checkpoint.Checkpoint) {
	b.Helper()
	ctx := context.Background()
	got, err := db.Tasks().Task(ctx, tk.ID())
	require.NoError(b, err)
	require.Equal(b, tk.State(), got.State())
	gotCp, err := db.Checkpoints().Checkpoint(ctx, tk.ID())
	require.NoError(b, err)
	require.Equal(b, cp.State(), gotCp.State())
}

// BenchmarkTaskPut measures the mirror's Put of a completed 10-stage task with its checkpoint
// (what the Redis store does after every write Redis accepted): a copy of the task's state
// (its ledger) and of the checkpoint's, under the store's lock.
func BenchmarkTaskPut(b *testing.B) {
	db, tk, cp := benchDB(b)
	tasks := db.Tasks()
	b.ReportAllocs()
	for b.Loop() {
		tasks.Put(tk, cp)
	}
	b.StopTimer()
	requireStored(b, db, tk, cp)
}

// BenchmarkTaskRead measures reading a completed 10-stage task (TaskRepo.Task: every read of
// a task on the in-memory store, and of the Redis store's mirror): the stored state turned
// back into a task, its ledger copied.
func BenchmarkTaskRead(b *testing.B) {
	db, tk, cp := benchDB(b)
	db.Tasks().Put(tk, cp)
	tasks := db.Tasks()
	ctx := context.Background()
	b.ReportAllocs()
	var got *task.Task
	for b.Loop() {
		var err error
		got, err = tasks.Task(ctx, tk.ID())
		require.NoError(b, err)
	}
	b.StopTimer()
	require.Equal(b, tk.State(), got.State())
}

// BenchmarkMirrorTaskPut is BenchmarkTaskPut on a bounded mirror (NewMirror, the Redis store's
// default cache of 10,000 tasks): the same Put, plus the bookkeeping of what it keeps.
func BenchmarkMirrorTaskPut(b *testing.B) {
	db, tk, cp := benchDBOn(b, memrepo.NewMirror(memrepo.MirrorOptions{CacheTasks: 10_000}))
	tasks := db.Tasks()
	b.ReportAllocs()
	for b.Loop() {
		tasks.Put(tk, cp)
	}
	b.StopTimer()
	requireStored(b, db, tk, cp)
}

// BenchmarkMirrorTaskPutEvicting measures the Put of a completed 10-stage task, with its
// checkpoint, into a bounded mirror whose cache is full: every Put evicts the least recently
// used task (a steady rollout past the bound).
func BenchmarkMirrorTaskPutEvicting(b *testing.B) {
	db, tk, cp := benchDBOn(b, memrepo.NewMirror(memrepo.MirrorOptions{CacheTasks: 1_000}))
	// Copies of tk under other ids, each with its checkpoint: twice the bound, used in turn.
	copies := make([]*task.Task, 2_000)
	cps := make([]*checkpoint.Checkpoint, len(copies))
	for i := range copies {
		s := tk.State()
		s.ID = ulid.Make().String()
		var err error
		copies[i], err = task.Load(s)
		require.NoError(b, err)
		c := cp.State()
		c.TaskID = s.ID
		cps[i], err = checkpoint.Load(c)
		require.NoError(b, err)
	}
	tasks := db.Tasks()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tasks.Put(copies[i], cps[i])
		i = (i + 1) % len(copies)
	}
}
