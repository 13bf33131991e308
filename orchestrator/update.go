package orchestrator

import (
	"context"
	"strings"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/event"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// update applies fn to task id as stored and saves it as a compare-and-set, again after
// losing to another writer (task.Repository.Update), then tells the watchers. Operators'
// commands, the reaper and queue sweeps write through it; a run writes through commit.
func (o *core) update(ctx context.Context, id string, fn func(t *task.Task) (*checkpoint.Checkpoint, error)) (*task.Task, error) {
	var cp *checkpoint.Checkpoint
	t, err := o.tasks.Update(ctx, id, func(t *task.Task) (*checkpoint.Checkpoint, error) {
		var err error
		cp, err = fn(t)
		return cp, err
	})
	if err != nil {
		return nil, o.countFenced(err)
	}
	o.cfg.Events.Publish(taskEvent(t, cp))
	return t, nil
}

// updatePlan applies fn to plan id as stored and saves it as a compare-and-set, again after
// losing to another writer, then tells the watchers.
func (o *core) updatePlan(ctx context.Context, id string, fn func(p *plan.Plan) error) (*plan.Plan, error) {
	p, err := o.plans.Update(ctx, id, fn)
	if err != nil {
		return nil, err
	}
	o.cfg.Events.Publish(event.Event{Kind: event.Plan, PlanID: p.ID(), Status: string(p.Status()), Ring: ringEvent(p)})
	o.notify(id)
	return p, nil
}

// ringEvent is where a rolling plan stands, for its events (nil without waves).
func ringEvent(p *plan.Plan) *event.Ring {
	if !p.Rollout().Enabled() {
		return nil
	}
	r := p.Ring()
	out := &event.Ring{Index: r.Index, Wave: p.Rollout().Waves[r.Index].Name, State: strings.ToLower(string(r.Phase)), Halt: r.Halt}
	if ends := p.BakeEnds(); !ends.IsZero() {
		out.BakeEndsAt = &ends
	}
	return out
}
