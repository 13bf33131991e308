package server

import (
	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/orchestrator"
)

// The orchestrator is every port the use cases have on what runs plans: NewExecutor wires it
// into each of them (app.Deps).
var (
	_ app.Launcher    = (*orchestrator.Orchestrator)(nil)
	_ app.PlanControl = (*orchestrator.Orchestrator)(nil)
	_ app.TaskControl = (*orchestrator.Orchestrator)(nil)
	_ app.Reaper      = (*orchestrator.Orchestrator)(nil)
	_ app.PlanWatcher = (*orchestrator.Orchestrator)(nil)
	_ app.Unlocker    = (*orchestrator.Orchestrator)(nil)
)
