package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

// Health checks of a rolling plan's rings.
const (
	defaultCheckTimeout = 30 * time.Second // a check whose spec sets no timeout
	// checkGrace is how long past its timeout a check may still be running before another
	// executor (or this one) takes it for lost and makes it again.
	checkGrace = 15 * time.Second
)

// checkTimeout is the current ring's check timeout.
func checkTimeout(p *plan.Plan) time.Duration {
	if h := p.Rollout().Waves[p.Ring().Index].Health; h != nil && h.Timeout > 0 {
		return h.Timeout
	}
	return defaultCheckTimeout
}

// check makes the current ring's health check once (its ring CHECKING) and reports whether
// it passed; a failed check halts the plan. A check this executor does not live to finish is
// made again by whichever executor the Scheduler hands the plan to after checkTimeout plus
// checkGrace. The caller holds the plan lock.
func (ro *rollout) check(ctx context.Context, p *plan.Plan) bool {
	ring := p.Ring().Index
	ro.scheduleAt(ctx, p, p.Ring().Since.Add(checkTimeout(p)+checkGrace))
	err := ro.health(ctx, p)
	if err == nil {
		return true
	}
	ro.haltRing(ctx, p, fmt.Sprintf("ring %d (%s): health check failed: %v", ring, p.Rollout().Waves[ring].Name, err))
	return false
}

// health makes the http check of the plan's current ring: its params rendered like an http
// stage's, with .PlanID, .ExecutorURL and .Params.wave (the wave's name) and .Params.ring
// (its index); one attempt, within its timeout; a 2xx answer passes.
func (ro *rollout) health(ctx context.Context, p *plan.Plan) error {
	ring := p.Ring().Index
	w := p.Rollout().Waves[ring]
	spec := w.Health
	h, ok := ro.kinds.Handler(spec.Kind)
	if !ok {
		return errors.New("unknown check kind " + spec.Kind)
	}
	red := &stage.Redactor{}
	data := p.Rollout().RingData(p.ID(), ring)
	data.ExecutorURL, data.Secret = ro.cfg.ExecutorURL(), ro.resolve(red)
	params, err := stage.NewRenderer().Render(fmt.Sprintf("waves[%d].health.params", ring), spec.Params, data, stage.OptionsOf(h)...)
	if err != nil {
		return err
	}
	_, err = callStage(ctx, h, checkTimeout(p), stage.Request{
		PlanID: p.ID(), Stage: "health:" + w.Name, StageIndex: -1, Run: 1, Attempt: 1, Params: params,
	}, 0) // its output is not kept
	if err != nil {
		return errors.New(red.Text(err.Error())) // it becomes the plan's halt reason
	}
	return nil
}
