package redisrepo

import (
	"sync"

	"github.com/executor-dev/executor/domain/stage"
)

// specCacheSize bounds the stage templates cached for plans the mirror does not hold.
const specCacheSize = 256

// specCache holds the stage templates of plans read lately (a plan's template never changes),
// so that reading a task of a plan the mirror does not hold (another executor's, or one that
// ended) does not read the plan's hash each time. At most specCacheSize plans, the oldest
// entry evicted first.
type specCache struct {
	mu    sync.Mutex
	specs map[string][]stage.Spec
	order []string // insertion order, for eviction
}

func (c *specCache) get(planID string) ([]stage.Spec, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.specs[planID]
	return s, ok
}

func (c *specCache) put(planID string, specs []stage.Spec) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.specs == nil {
		c.specs = map[string][]stage.Spec{}
	}
	if _, ok := c.specs[planID]; ok {
		return
	}
	if len(c.order) == specCacheSize {
		delete(c.specs, c.order[0])
		c.order = c.order[1:]
	}
	c.specs[planID] = specs
	c.order = append(c.order, planID)
}
