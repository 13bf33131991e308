package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// violations collects every violation of a submission: at most MaxViolations are listed, the
// others counted. A violation at or under a field the transport reported (SubmitRequest.
// Violations: the value was dropped while decoding) is not reported again, nor is the same
// violation twice.
type violations struct {
	v    ValidationError
	skip []string
	seen map[FieldViolation]bool
}

func newViolations(decoded []FieldViolation) *violations {
	c := &violations{seen: map[FieldViolation]bool{}}
	for _, v := range decoded {
		c.add(v.Field, v.Reason)
		c.skip = append(c.skip, v.Field)
	}
	return c
}

func (c *violations) add(field, reason string) {
	for _, f := range c.skip {
		if field == f || strings.HasPrefix(field, f+".") || strings.HasPrefix(field, f+"[") {
			return
		}
	}
	fv := FieldViolation{Field: field, Reason: reason}
	if c.seen[fv] {
		return
	}
	c.seen[fv] = true
	if len(c.v.Violations) < MaxViolations {
		c.v.Violations = append(c.v.Violations, fv)
	} else {
		c.v.Omitted++
	}
}

func (c *violations) empty() bool { return len(c.v.Violations) == 0 }

func (c *violations) err() error {
	if c.empty() {
		return nil
	}
	return &c.v
}

// check runs every check of a submission and reports every violation it finds (see
// violations) in one *ValidationError: the transport's, the plan's fields, the stages, the
// tenants, the rings, and every template of every stage for every tenant. It returns the
// stages and the rings with their defaults, the tasks (of plan planID, in submission order)
// and what each tenant would run.
//
// elsewhere holds the kinds this executor lacks that a live executor sharing its store runs
// (kindsElsewhere): a stage of such a kind is accepted, its params checked by its templates
// alone (the executor that runs it checks the rest).
func (s *Service) check(ctx context.Context, req SubmitRequest, planID string, now time.Time, elsewhere map[string]bool) ([]stage.Spec, plan.Rollout, []*task.Task, []TenantPreview, error) {
	c := newViolations(req.Violations)
	stages := s.withApprovers(s.checkSubmission(req, elsewhere, c.add), req.Approvers, originOf(ctx).Actor)
	rollout := s.checkRollout(req, c.add)
	tasks := make([]*task.Task, len(req.Tenants))
	var failed []int
	for i, tn := range req.Tenants {
		t, err := task.New(planID, tn.ID, tn.Params, stages, now)
		if err != nil { // a bad tenant id or no stage: reported above
			failed = append(failed, i)
			continue
		}
		tasks[i] = t
	}
	var previews []TenantPreview
	if !s.limits.exceeded(req) { // rendering a plan refused for its size could take long
		previews = s.render(ctx, stages, tasks, req.page(), c.add)
	}
	if c.empty() {
		for _, i := range failed { // cannot happen: what task.New refuses is reported above
			c.add(fmt.Sprintf("tenants[%d]", i), "is not a valid tenant")
		}
	}
	if err := c.err(); err != nil {
		return nil, plan.Rollout{}, nil, nil, err
	}
	return stages, rollout, tasks, previews, nil
}

// checkSubmission reports through add what is wrong with anything but templates, and returns
// the stages with their defaults.
func (s *Service) checkSubmission(req SubmitRequest, elsewhere map[string]bool, add func(field, reason string)) []stage.Spec {
	s.limits.checkLimits(req, add)
	if len(req.Name) > MaxNameLength {
		add("name", fmt.Sprintf("must be at most %d characters", MaxNameLength))
	}
	if len(req.Labels) > s.limits.MaxLabels {
		add("labels", fmt.Sprintf("at most %d labels", s.limits.MaxLabels))
	}
	for _, k := range slices.Sorted(maps.Keys(req.Labels)) {
		if !labelKeyPattern.MatchString(k) {
			add("labels."+k, "label key must match "+labelKeyPattern.String())
		} else if len(req.Labels[k]) > s.limits.MaxLabelValueBytes {
			add("labels."+k, fmt.Sprintf("a label value is at most %d bytes, not %d", s.limits.MaxLabelValueBytes, len(req.Labels[k])))
		}
	}
	if req.MaxConcurrency < 0 || req.MaxConcurrency > plan.MaxMaxConcurrency {
		add("maxConcurrency", fmt.Sprintf("must be between 1 and %d", plan.MaxMaxConcurrency))
	}
	if req.FailureBudget < 0 {
		add("failureBudget", "must not be negative")
	}
	if o := req.OnFailure; o != "" && !o.Valid() {
		add("onFailure", fmt.Sprintf("must be one of %v, not %q", plan.OnFailures, o))
	} else if o == plan.OnFailureRollback && !slices.ContainsFunc(req.Stages, func(sp stage.Spec) bool { return sp.Undo != nil }) {
		add("onFailure", "rollback undoes stages with an undo, and no stage has one")
	}
	var fe *stage.FieldError
	if errors.As(req.Approvers.Validate("approvers"), &fe) {
		add(fe.Field, fe.Reason)
	}
	s.checkRoles("approvers", req.Approvers, add)
	s.checkNotify(req.Notify, add)
	if req.StartRate < 0 || req.StartRate > plan.MaxStartRate {
		add("startRate", fmt.Sprintf("must be between 0 (no pacing) and %d task starts per minute", plan.MaxStartRate))
	}
	if len(req.Tenants) > 0 {
		if errors.As(req.Canary.Validate(len(req.Tenants)), &fe) {
			add(fe.Field, fe.Reason)
		}
	}
	stages := s.checkStages(req.Stages, elsewhere, add)
	if len(req.Tenants) == 0 {
		add("tenants", "at least one tenant is required")
	}
	seen := map[string]int{}
	for i, tn := range req.Tenants {
		field := fmt.Sprintf("tenants[%d].id", i)
		if !task.TenantIDPattern.MatchString(tn.ID) {
			add(field, "must match "+task.TenantIDPattern.String())
			continue
		}
		if j, dup := seen[tn.ID]; dup {
			add(field, fmt.Sprintf("duplicates tenants[%d].id %q", j, tn.ID))
		}
		seen[tn.ID] = i
	}
	checkTenantSecrets(req.Tenants, add)
	return stages
}

// checkTenantSecrets refuses a tenant param that holds {{secret "name"}}: a tenant's params are
// data, not templates, so the text would reach the stage as written, never the secret (and a
// secret written out in a param would be stored with the plan and shown by a dry run as any
// param). A per-tenant secret is named in a param and read by a stage's template.
func checkTenantSecrets(tenants []TenantInput, add func(field, reason string)) {
	for i, tn := range tenants {
		for _, k := range slices.Sorted(maps.Keys(tn.Params)) {
			names := stage.SecretsIn(map[string]any{k: tn.Params[k]})
			if len(names) == 0 {
				continue
			}
			add(fmt.Sprintf("tenants[%d].params.%s", i, k), fmt.Sprintf("a tenant's params are data, not templates: {{secret %q}} here "+
				"would reach the stage as written, never the secret; give the secret's name instead (%s: %s) and read it in the "+
				"stage's params with {{secret .Params.%s}}", names[0], k, names[0], k))
		}
	}
}

// checkStages checks each stage of a submission (its spec, its kind and its undo's run by a
// live executor, an approvers rule only on a gate, unique names) and returns them with their
// retry policies' defaults filled in.
func (s *Service) checkStages(specs []stage.Spec, elsewhere map[string]bool, add func(field, reason string)) []stage.Spec {
	if len(specs) == 0 {
		add("stages", "at least one stage is required")
	}
	stages := make([]stage.Spec, len(specs))
	names := map[string]int{}
	for i, sp := range specs {
		field := fmt.Sprintf("stages[%d]", i)
		checked, err := sp.Validate(field)
		var fe *stage.FieldError
		if errors.As(err, &fe) {
			add(fe.Field, fe.Reason)
		}
		stages[i] = checked
		if _, ok := s.kinds.Handler(sp.Kind); sp.Kind != "" && !ok && !elsewhere[sp.Kind] {
			add(field+".kind", fmt.Sprintf("unknown stage kind %q: no live executor runs it; want one of %s", sp.Kind,
				strings.Join(knownKinds(s.kinds.Kinds(), elsewhere), ", ")))
		}
		s.checkRoles(field+".approvers", sp.Approvers, add)
		if _, known := s.kinds.Handler(sp.Kind); known && sp.Approvers != nil && !s.isGate(sp.Kind) {
			add(field+".approvers", fmt.Sprintf("only a gate (the approval kind) takes approvers; %q is not one", sp.Kind))
		}
		if u := sp.Undo; u != nil && u.Kind != "" {
			if _, ok := s.kinds.Handler(u.Kind); !ok && !elsewhere[u.Kind] {
				add(field+".undo.kind", fmt.Sprintf("unknown stage kind %q: no live executor runs it; want one of %s", u.Kind,
					strings.Join(knownKinds(s.kinds.Kinds(), elsewhere), ", ")))
			}
		}
		if j, dup := names[sp.Name]; dup && sp.Name != "" {
			add(field+".name", fmt.Sprintf("duplicates stages[%d].name %q", j, sp.Name))
		}
		names[sp.Name] = i
	}
	return stages
}

// render renders every tenant's stages with placeholder outputs and lets each kind check its
// params, reporting through add every template that fails for any tenant, so a plan that
// cannot run for some tenant is refused before anything is created. Params that read earlier
// stages' outputs are checked as templates only: their values are unknown until those stages
// ran. tasks[i] is nil for a tenant that has no task (its id is invalid): it is skipped. It
// returns what the tenants keep holds (by index in tasks) would run, in order; the others'
// renders are dropped as soon as they are checked.
//
// The rendering of all tenants together is bounded (Limits.MaxRenderSteps, MaxRenderBytes):
// past either, the plan is refused and no more tenant is rendered. So is it when ctx ends (the
// client went away): nothing is created.
func (s *Service) render(ctx context.Context, stages []stage.Spec, tasks []*task.Task, keep func(int) bool, add func(field, reason string)) []TenantPreview {
	r := stage.NewBudgetedRenderer(s.limits.MaxRenderSteps, s.limits.MaxRenderBytes)
	// The same for every tenant: each stage's field name, the earlier stages' placeholders,
	// the kind's handler and URL params.
	fields := make([]string, len(stages))
	placeholders := make([]map[string]any, len(stages))
	handlers := make([]stage.Handler, len(stages))
	opts := make([][]stage.Option, len(stages))
	for si, sp := range stages {
		fields[si] = fmt.Sprintf("stages[%d].params", si)
		placeholders[si] = stage.PlaceholderOutputs(stages, si)
		handlers[si], _ = s.kinds.Handler(sp.Kind)
		opts[si] = stage.OptionsOf(handlers[si])
	}
	undos := make([]*undoCheck, len(stages))
	for si, sp := range stages {
		if sp.Undo != nil {
			h, _ := s.kinds.Handler(sp.Undo.Kind)
			undos[si] = &undoCheck{spec: *sp.Undo, field: fmt.Sprintf("stages[%d].undo.params", si),
				outputs: stage.PlaceholderOutputs(stages, si+1), handler: h, opts: stage.OptionsOf(h)}
		}
	}
	var previews []TenantPreview
	for ti, t := range tasks {
		if err := ctx.Err(); err != nil {
			add("body", "the request ended before every tenant's params were rendered: "+err.Error())
			return previews
		}
		if r.Spent() {
			return previews // reported by the template that spent it
		}
		if t == nil {
			continue
		}
		preview := TenantPreview{TenantID: t.TenantID(), Stages: make([]RenderedStage, len(stages))}
		reason := func(r string) string { return fmt.Sprintf("for tenant %q (tenants[%d]): %s", t.TenantID(), ti, r) }
		for si, sp := range stages {
			params, errs := r.RenderAll(fields[si], sp.Params, stage.Data{
				TenantID: t.TenantID(), PlanID: t.PlanID(), TaskID: t.ID(), Attempt: 1,
				Params: t.Params(), Outputs: placeholders[si], ExecutorURL: s.executorURL(), Secret: s.secretPlaceholder,
			}, opts[si]...)
			for _, fe := range errs {
				add(fe.Field, reason(fe.Reason))
			}
			if pv, ok := handlers[si].(stage.ParamValidator); ok && len(errs) == 0 && !sp.UsesOutputs() {
				if verr := pv.ValidateParams(params); verr != nil {
					var fe *stage.FieldError
					if errors.As(paramError(fields[si], verr), &fe) {
						add(fe.Field, reason(fe.Reason))
					}
				}
			}
			preview.Stages[si] = RenderedStage{Name: sp.Name, Kind: sp.Kind, Params: params}
			if u := undos[si]; u != nil {
				s.renderUndo(r, u, t, reason, add)
			}
		}
		if keep(ti) {
			previews = append(previews, preview)
		}
	}
	return previews
}

// secretPlaceholder is {{secret "name"}} when a submission is checked: "<secret NAME>" when
// this executor resolves the secret (its value is not kept), else the resolver's error.
func (s *Service) secretPlaceholder(name string) (string, error) {
	if _, err := s.secretValue(name); err != nil {
		return "", err
	}
	return "<secret " + name + ">", nil
}
