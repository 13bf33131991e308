package orchestrator

// Running returns how many tasks this orchestrator is running right now: the task runs it
// owns, from the moment a run is registered until it has ended (queued tasks are Queued's).
// It is what an executor reports as its runs in the cluster's member registry.
func (o *Orchestrator) Running() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.active)
}
