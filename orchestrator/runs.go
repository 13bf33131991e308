package orchestrator

// Runs reports whether this executor runs the task now.
func (o *Orchestrator) Runs(taskID string) bool { return o.local(taskID) != nil }
