package orchestrator

import (
	"context"
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

// kindsReadTimeout bounds the read of a plan whose kinds the dispatch loop checks: once per
// plan with work, long enough for a Redis seconds away (a shared executor's client waits up to
// 5 s), since a plan not read is not claimed this round.
const kindsReadTimeout = 5 * time.Second

// runnable reports whether this executor can run the tasks of plan planID: it has the kind of
// every stage and of every stage's undo, accepts their params and reads the secrets they name
// (cannotRun). A plan it cannot run is left in the queue for the executors that can (each
// advertises its kinds, and a submission is refused when no live executor has them): a task
// is never claimed here to fail for an unknown kind. A plan's stages never change, so the
// answer is kept while the plan has work (keepKinds); a plan that cannot be read now is not
// claimed this round.
func (d *dispatcher) runnable(planID string) bool {
	d.mu.Lock()
	ok, known := d.kindsOK[planID]
	d.mu.Unlock()
	if known {
		return ok
	}
	ctx, cancel := context.WithTimeout(d.ctx, kindsReadTimeout)
	defer cancel()
	p, err := d.plans.Plan(ctx, planID)
	if err != nil {
		d.cfg.Logger.Debug("read a plan's stage kinds", "plan_id", planID, "err", err)
		return false
	}
	ok = true
	for _, sp := range p.Stages() {
		why := d.cannotRun(sp)
		if why == "" && sp.Undo != nil { // a rollback runs on whichever executor claims the task
			why = d.cannotRun(*sp.Undo)
		}
		if why != "" {
			ok = false
			d.cfg.Logger.Info("plan left to the executors that run its stages: "+why, "plan_id", planID, "stage", sp.Name, "kind", sp.Kind)
			break
		}
	}
	d.mu.Lock()
	d.kindsOK[planID] = ok
	d.mu.Unlock()
	return ok
}

// cannotRun says why this executor cannot run stage sp ("" when it can): it lacks the kind,
// would refuse its params (an exec command it does not allow), or cannot read a secret its
// params name ({{secret "name"}}: its --secrets-dir lacks the file).
func (d *dispatcher) cannotRun(sp stage.Spec) string {
	h, has := d.kinds.Handler(sp.Kind)
	if !has {
		return "this one lacks the kind"
	}
	if a, limits := h.(ParamsAcceptor); limits && !a.Accepts(sp.Params) {
		return "this one refuses its params"
	}
	for _, name := range stage.SecretsIn(sp.Params) {
		if d.cfg.Secrets == nil {
			return "this one has no secrets (serve --secrets-dir)"
		}
		if _, err := d.cfg.Secrets.Secret(name); err != nil {
			return "this one cannot read secret " + name
		}
	}
	return ""
}

// keepKinds forgets the answers of runnable for the plans not in plans (the plans with work,
// as just listed).
func (d *dispatcher) keepKinds(plans []string) {
	listed := make(map[string]bool, len(plans))
	for _, id := range plans {
		listed[id] = true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for id := range d.kindsOK {
		if !listed[id] {
			delete(d.kindsOK, id)
		}
	}
}
