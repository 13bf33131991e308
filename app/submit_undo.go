package app

import (
	"errors"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// undoCheck is what checking a stage's undo needs, the same for every tenant.
type undoCheck struct {
	spec    stage.Spec
	field   string         // "stages[i].undo.params"
	outputs map[string]any // placeholders of the stages it may read: its own and the earlier ones
	handler stage.Handler  // nil: a kind another executor runs (templates are checked alone)
	opts    []stage.Option
}

// renderUndo renders stage si's undo for tenant t's task, as a rollback would, and reports
// through add what fails (reason names the tenant): an undo that cannot run is refused at
// submission like a stage, not found out when the tenant needs rolling back.
func (s *Service) renderUndo(r *stage.Renderer, u *undoCheck, t *task.Task, reason func(string) string, add func(field, reason string)) {
	params, errs := r.RenderAll(u.field, u.spec.Params, stage.Data{
		TenantID: t.TenantID(), PlanID: t.PlanID(), TaskID: t.ID(), Attempt: 2,
		Params: t.Params(), Outputs: u.outputs, ExecutorURL: s.executorURL(), Secret: s.secretPlaceholder,
	}, u.opts...)
	for _, fe := range errs {
		add(fe.Field, reason(fe.Reason))
	}
	if pv, ok := u.handler.(stage.ParamValidator); ok && len(errs) == 0 && !u.spec.UsesOutputs() {
		if verr := pv.ValidateParams(params); verr != nil {
			var fe *stage.FieldError
			if errors.As(paramError(u.field, verr), &fe) {
				add(fe.Field, reason(fe.Reason))
			}
		}
	}
}
