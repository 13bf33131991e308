package server

import "github.com/executor-dev/executor/domain/availability"

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
