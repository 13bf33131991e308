package orchestrator

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/executor-dev/executor/domain/plan"
)

// maxNoted bounds the notices an executor remembers having recorded (notedSet): beyond, it
// forgets them all and may read a plan once more to find a notice recorded already.
const maxNoted = 10000

// notedSet remembers which once-per-plan notices (a gate's first waiting tenant, the budget
// crossed, a rollback's start) this executor recorded, or found recorded or unwanted, so that
// the tenants after the first cost no plan write (nor read).
type notedSet struct {
	mu   sync.Mutex
	seen map[string]struct{}
}

// first reports whether key is new, and remembers it.
func (n *notedSet) first(key string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.seen[key]; ok {
		return false
	}
	if n.seen == nil || len(n.seen) >= maxNoted {
		n.seen = map[string]struct{}{}
	}
	n.seen[key] = struct{}{}
	return true
}

// noteOnce records a once-per-plan notice on plan planID (note: the plan's Note… method,
// false when it has it already or no destination wants it), the first time this executor
// meets key; the plan is saved only when note recorded one. Best effort: a failure is logged
// (the event's consequence, a waiting tenant, stays visible in the plan).
func (o *core) noteOnce(ctx context.Context, planID, key string, note func(p *plan.Plan, now time.Time) bool) {
	if !o.noted.first(planID + "/" + key) {
		return
	}
	_, err := o.updatePlan(ctx, planID, func(p *plan.Plan) error {
		if len(p.Notify()) == 0 || !note(p, o.now()) {
			return errSkip
		}
		return nil
	})
	if err != nil && !errors.Is(err, errSkip) {
		o.cfg.Logger.Warn("notice not recorded", "plan_id", planID, "notice", key, "err", err)
	}
}
