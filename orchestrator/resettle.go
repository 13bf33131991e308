package orchestrator

import (
	"context"
	"time"
)

// Plans settled while Redis was away are settled again once it answers. While degraded, a
// settle decides from this executor's copies: the plan's other tasks may have ended on other
// executors meanwhile (its copies still say PENDING or RUNNING, so it leaves the plan
// RUNNING), and the other executors, which settled from Redis before this executor's ends
// were written back, left it RUNNING too; a plan this executor did settle on memory may lose
// its write at the write-back. Without a second look the plan would stay RUNNING with every
// task ended. So every plan settled while degraded, or whose settle failed, is remembered,
// and settled again from Redis after the write-back (Restored), or at the dispatch loop's
// next round while Redis answers (a mark made as Restored ran).

// resettleFor is how long, in lease TTLs, a plan remembered by markResettle is settled again
// at every dispatch round while it has not ended: the other executors that ran its tasks
// while Redis was away write them back within about one lease TTL of its return, maybe after
// this executor's own settle.
const resettleFor = 3

// markResettle remembers planID to settle again once Redis answers, and at every dispatch
// round for resettleFor lease TTLs while it has not ended.
func (s *settler) markResettle(planID string) {
	until := s.now().Add(resettleFor * s.cfg.LeaseTTL)
	s.mu.Lock()
	if until.After(s.resettle[planID]) {
		s.resettle[planID] = until
	}
	s.mu.Unlock()
}

// resettleAll settles again the plans remembered by markResettle, unless the store is still
// degraded (they wait for the next round) or the executor is shutting down (a shutdown
// settles nothing). A settle that fails or runs degraded remembers its plan again; a plan
// that has not ended stays remembered until its time is up.
func (s *settler) resettleAll() {
	if s.degraded() || s.draining.Load() {
		return
	}
	s.mu.Lock()
	if len(s.resettle) == 0 {
		s.mu.Unlock()
		return
	}
	plans := make(map[string]time.Time, len(s.resettle))
	for id, until := range s.resettle {
		plans[id] = until
	}
	clear(s.resettle)
	s.mu.Unlock()
	now := s.now()
	for id, until := range plans {
		s.settle(id)
		if !now.Before(until) {
			continue
		}
		p, err := s.plans.Plan(context.WithoutCancel(s.ctx), id)
		if err == nil && !p.Status().Terminal() {
			s.mu.Lock()
			if until.After(s.resettle[id]) {
				s.resettle[id] = until
			}
			s.mu.Unlock()
		}
	}
}
