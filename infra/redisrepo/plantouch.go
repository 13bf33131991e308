package redisrepo

import (
	"sync"
	"time"
)

// planTouchEvery divides the TTL into the interval at which the end of a plan's tasks
// refreshes the plan's TTL: a rollout of short tasks that lasts longer than the TTL keeps its
// plan, without one more command per task.
const planTouchEvery = 1000

// planTouchesMax bounds the plans remembered; past it the memory starts over (a plan then
// gets one early refresh).
const planTouchesMax = 4096

// planTouches remembers when each plan's TTL was last refreshed by a task's end.
type planTouches struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// due reports whether planID's TTL should be refreshed now, and if so records it as done.
func (p *planTouches) due(planID string, ttl time.Duration) bool {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if last, ok := p.last[planID]; ok && now.Sub(last) < ttl/planTouchEvery {
		return false
	}
	if p.last == nil || len(p.last) >= planTouchesMax {
		p.last = map[string]time.Time{}
	}
	p.last[planID] = now
	return true
}
