package server

import (
	"context"

	"github.com/executor-dev/executor/domain/availability"
)

// Availability is where the executor stands, at this instant, with its store: the one state
// the use cases (app.Availability) and the orchestrator (orchestrator.Availability) read.
func (e *Executor) Availability() availability.State {
	return availability.State{
		Shared:       e.cfg.shared(),
		Reached:      !e.notReady(),
		Degraded:     e.Degraded(),
		ClaimsPaused: e.claimsPaused(),
		Draining:     e.orch != nil && e.orch.ShuttingDown(),
	}
}

// settled is app.Deps.Settled: on a shared Redis, the store's check that the executors wrote
// back what they held after it lost its data; alone (one executor: its write-back is all
// there is) or on memory, always settled.
func (e *Executor) settled(ctx context.Context) error {
	if e.store == nil || !e.cfg.shared() {
		return nil
	}
	return e.store.Settled(ctx)
}
