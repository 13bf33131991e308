package orchestrator

// Plans settled while Redis was away are settled again once it answers. While degraded, a
// settle decides from this executor's copies: the plan's other tasks may have ended on other
// executors meanwhile (its copies still say PENDING or RUNNING, so it leaves the plan
// RUNNING), and the other executors, which settled from Redis before this executor's ends
// were written back, left it RUNNING too; a plan this executor did settle on memory may lose
// its write at the write-back. Without a second look the plan would stay RUNNING with every
// task ended. So every plan settled while degraded, or whose settle failed, is remembered,
// and settled again from Redis after the write-back (Restored), or at the dispatch loop's
// next round while Redis answers (a mark made as Restored ran).

// markResettle remembers planID to settle again once Redis answers.
func (o *Orchestrator) markResettle(planID string) {
	o.mu.Lock()
	o.resettle[planID] = true
	o.mu.Unlock()
}

// resettleAll settles again the plans remembered by markResettle, unless the store is still
// degraded (they wait for the next round) or the executor is shutting down (a shutdown
// settles nothing). A settle that fails or runs degraded remembers its plan again.
func (o *Orchestrator) resettleAll() {
	if o.cfg.Degraded() || o.draining.Load() {
		return
	}
	o.mu.Lock()
	if len(o.resettle) == 0 {
		o.mu.Unlock()
		return
	}
	plans := make([]string, 0, len(o.resettle))
	for id := range o.resettle {
		plans = append(plans, id)
	}
	clear(o.resettle)
	o.mu.Unlock()
	for _, id := range plans {
		o.settle(id)
	}
}
