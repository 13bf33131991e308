// Package apptest wires the use cases and the orchestrator over any store, for tests: the same
// wiring as server, without HTTP, with the orchestrator stopped when the test ends.
package apptest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/availability"
	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/dispatch"
	"github.com/executor-dev/executor/infra/schedule"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// Stores is one backend: its repositories and its tenant locker.
type Stores struct {
	Creator     app.Creator
	Plans       plan.Repository
	Tasks       task.Repository
	Checkpoints checkpoint.Store
	// Index is the store's plan index; nil: Tasks, when it is one.
	Index  app.PlanIndex
	Locker interface {
		orchestrator.Locker
		app.Holders
	}
	// Transcripts keeps what attempts printed (the runs write, the task queries read); nil:
	// nothing is kept, unless cfg.Transcripts keeps it.
	Transcripts interface {
		orchestrator.Transcripts
		app.Transcripts
	}
}

// New starts an orchestrator over st with kinds (the built-in kinds when nil) and returns the
// use cases on it. The orchestrator is stopped, and must stop cleanly, when t ends.
func New(t testing.TB, st Stores, kinds *stagekind.Registry, cfg orchestrator.Config) (*app.Service, *orchestrator.Orchestrator) {
	t.Helper()
	return NewWith(t, st, kinds, cfg, nil)
}

// NewWith is New with the use cases' dependencies adjusted by adjust (nil: as New), which is
// given the orchestrator every port is wired to.
func NewWith(t testing.TB, st Stores, kinds *stagekind.Registry, cfg orchestrator.Config,
	adjust func(d *app.Deps, orch *orchestrator.Orchestrator)) (*app.Service, *orchestrator.Orchestrator) {
	t.Helper()
	if kinds == nil {
		kinds = stagekind.Builtin(stagekind.HTTPOptions{})
	}
	var sched *schedule.Memory
	if cfg.Scheduler == nil { // the embedded default: a timer heap
		sched = schedule.NewMemory(schedule.MemoryOptions{})
		cfg.Scheduler = sched
	}
	if cfg.Queue == nil { // the embedded default: one process's queues
		cfg.Queue = dispatch.ForMemory(dispatch.NewMemory(dispatch.MemoryOptions{}))
	}
	if cfg.Transcripts == nil {
		cfg.Transcripts = st.Transcripts
	}
	orch := orchestrator.New(st.Plans, st.Tasks, st.Checkpoints, st.Locker, kinds, cfg)
	require.NoError(t, orch.Start(context.Background()))
	if sched != nil {
		sched.SetDue(orch.StartScheduled)
		require.NoError(t, sched.Start(context.Background()))
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if sched != nil {
			require.NoError(t, sched.Stop(ctx))
		}
		require.NoError(t, orch.Stop(ctx))
	})
	if st.Index == nil {
		st.Index, _ = st.Tasks.(app.PlanIndex)
	}
	deps := app.Deps{
		Creator: st.Creator, Plans: st.Plans, Tasks: st.Tasks, Checkpoints: st.Checkpoints, Index: st.Index,
		Kinds: kinds, Holders: st.Locker, Availability: Draining(orch),
		Launcher: orch, PlanControl: orch, TaskControl: orch, Reaper: orch, Watcher: orch, Unlocker: orch,
		Transcripts: st.Transcripts,
	}
	if adjust != nil {
		adjust(&deps, orch)
	}
	return app.New(deps), orch
}

// Draining is the availability of an executor whose store always answers, draining once orch
// is shutting down.
func Draining(orch *orchestrator.Orchestrator) availability.Func {
	return func() availability.State {
		st := availability.Up()
		st.Draining = orch.ShuttingDown()
		return st
	}
}
