package app

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// Limits on a submission.
const (
	MaxNameLength = 200
	MaxLabels     = 64
)

var labelKeyPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,62}$`)

// TenantInput is one tenant of a submission.
type TenantInput struct {
	ID     string
	Params map[string]any
}

// SubmitRequest is a plan submission.
type SubmitRequest struct {
	Name           string
	Labels         map[string]string
	MaxConcurrency int // 0: plan.DefaultMaxConcurrency
	FailureBudget  int // 0: none
	StartAt        time.Time
	StartRate      int // task starts per minute; 0: no pacing
	Canary         plan.Canary
	Stages         []stage.Spec
	Tenants        []TenantInput
	IdempotencyKey string
	DryRun         bool
}

// RenderedStage is a stage as it would run for one tenant (outputs of earlier stages are
// placeholders in a preview).
type RenderedStage struct {
	Name   string
	Kind   string
	Params map[string]any
}

// TenantPreview is what a dry run would run for one tenant.
type TenantPreview struct {
	TenantID string
	Stages   []RenderedStage
}

// Submission is the result of Submit.
type Submission struct {
	Plan      PlanView        // the created (or, for a repeated idempotency key, the first) plan; zero on a dry run
	Replayed  bool            // the idempotency key was seen before: nothing was created
	Preview   []TenantPreview // dry run only
	Conflicts []string        // dry run only: tenants whose latest task has not ended
}

// Submit validates a plan, renders every tenant's stages, checks that no tenant has a task
// that has not ended, and creates and launches the plan. Nothing is created when any check
// fails (or on a dry run). Once the creation begins, ctx's cancellation (a client that went
// away) no longer stops it: the plan is created and launched all the same (see
// createAndLaunch).
func (s *Service) Submit(ctx context.Context, req SubmitRequest) (*Submission, error) {
	if sub, err := s.replay(ctx, req); sub != nil || err != nil {
		return sub, err // fast path; checked again under the lock
	}
	stages, err := s.checkSubmission(req)
	if err != nil {
		return nil, err
	}
	planID := ulid.Make().String()
	now := s.now()
	tasks := make([]*task.Task, len(req.Tenants))
	taskIDs := make([]string, len(req.Tenants))
	for i, tn := range req.Tenants {
		if tasks[i], err = task.New(planID, tn.ID, tn.Params, stages, now); err != nil {
			return nil, invalid(fmt.Sprintf("tenants[%d]", i), err.Error())
		}
		taskIDs[i] = tasks[i].ID()
	}
	p, err := plan.New(plan.Draft{
		ID: planID, Name: req.Name, Labels: req.Labels, Stages: stages, TaskIDs: taskIDs,
		MaxConcurrency: req.MaxConcurrency, FailureBudget: req.FailureBudget, StartAt: req.StartAt,
		IdempotencyKey: req.IdempotencyKey, Canary: req.Canary, StartRate: req.StartRate,
	}, now)
	if err != nil {
		return nil, asValidation(err)
	}
	preview, err := s.render(stages, tasks)
	if err != nil {
		return nil, err
	}

	if !req.DryRun && s.RefuseNewPlans != nil && s.RefuseNewPlans() {
		return nil, ErrUnavailable
	}
	if err := s.refuseWork(); err != nil && !req.DryRun {
		return nil, err
	}
	if req.DryRun {
		conflicts, err := s.conflicts(ctx, req.Tenants)
		if err != nil {
			return nil, err
		}
		return &Submission{Preview: preview, Conflicts: conflicts}, nil
	}
	s.submitMu.Lock() // one idempotency key, one plan
	defer s.submitMu.Unlock()
	if sub, err := s.replay(ctx, req); sub != nil || err != nil {
		return sub, err
	}
	if err := s.checkQueue(len(tasks)); err != nil { // under submitMu: Launch below queues the tasks
		return nil, err
	}
	// The store checks the tenants as one step with the creation, for every executor. From
	// here on the caller going away cancels nothing (createAndLaunch).
	if err := s.createAndLaunch(ctx, p, tasks); err != nil {
		return nil, err
	}
	// The tasks were all just written PENDING: no need to read them back (a 10,000-tenant plan).
	statuses := make([]task.Status, len(tasks))
	for i, t := range tasks {
		statuses[i] = t.Status()
	}
	return &Submission{Plan: PlanView{Plan: p, Progress: progressOf(statuses)}}, nil
}

// replay returns the plan first submitted with the request's idempotency key, if any.
func (s *Service) replay(ctx context.Context, req SubmitRequest) (*Submission, error) {
	if req.IdempotencyKey == "" || req.DryRun {
		return nil, nil
	}
	p, err := s.Plans.ByIdempotencyKey(ctx, req.IdempotencyKey)
	if errors.Is(err, plan.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// The executor that took the first submission may have died before it launched the plan
	// (the client retries because it got no answer): the plan is launched now if it was not.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), LaunchTimeout)
	rerr := s.Runner.Relaunch(rctx, p.ID())
	cancel()
	if p, err = s.Plans.Plan(ctx, p.ID()); err != nil {
		return nil, err
	}
	if rerr != nil && p.Status() == plan.Pending { // not launched, by this relaunch nor another
		return nil, rerr
	}
	v, err := s.view(ctx, p)
	return &Submission{Plan: v, Replayed: true}, err
}

// checkSubmission validates everything but templates and returns the stages with defaults.
func (s *Service) checkSubmission(req SubmitRequest) ([]stage.Spec, error) {
	var v ValidationError
	add := func(field, reason string) { v.Violations = append(v.Violations, FieldViolation{field, reason}) }
	s.Limits.checkLimits(req, add)
	if len(req.Name) > MaxNameLength {
		add("name", fmt.Sprintf("must be at most %d characters", MaxNameLength))
	}
	if len(req.Labels) > MaxLabels {
		add("labels", fmt.Sprintf("at most %d labels", MaxLabels))
	}
	for k := range req.Labels {
		if !labelKeyPattern.MatchString(k) {
			add("labels."+k, "label key must match "+labelKeyPattern.String())
		}
	}
	if req.MaxConcurrency < 0 || req.MaxConcurrency > plan.MaxMaxConcurrency {
		add("maxConcurrency", fmt.Sprintf("must be between 1 and %d", plan.MaxMaxConcurrency))
	}
	if req.FailureBudget < 0 {
		add("failureBudget", "must not be negative")
	}
	if len(req.Stages) == 0 {
		add("stages", "at least one stage is required")
	}
	stages := make([]stage.Spec, len(req.Stages))
	names := map[string]int{}
	for i, sp := range req.Stages {
		field := fmt.Sprintf("stages[%d]", i)
		checked, err := sp.Validate(field)
		var fe *stage.FieldError
		if errors.As(err, &fe) {
			add(fe.Field, fe.Reason)
		}
		stages[i] = checked
		if _, ok := s.Kinds.Handler(sp.Kind); sp.Kind != "" && !ok {
			add(field+".kind", fmt.Sprintf("unknown stage kind %q", sp.Kind))
		}
		if j, dup := names[sp.Name]; dup && sp.Name != "" {
			add(field+".name", fmt.Sprintf("duplicates stages[%d].name %q", j, sp.Name))
		}
		names[sp.Name] = i
	}
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
	if len(v.Violations) > 0 {
		return nil, &v
	}
	return stages, nil
}

// render renders every tenant's stages with placeholder outputs and lets each kind check its
// params, so a plan that cannot run for some tenant is refused before anything is created.
// Params that read earlier stages' outputs are checked as templates only: their values are
// unknown until those stages ran.
func (s *Service) render(stages []stage.Spec, tasks []*task.Task) ([]TenantPreview, error) {
	r := stage.NewRenderer()
	// The same for every tenant: each stage's field name and the earlier stages' placeholders.
	fields := make([]string, len(stages))
	placeholders := make([]map[string]any, len(stages))
	for si := range stages {
		fields[si] = fmt.Sprintf("stages[%d].params", si)
		placeholders[si] = stage.PlaceholderOutputs(stages, si)
	}
	previews := make([]TenantPreview, len(tasks))
	for ti, t := range tasks {
		previews[ti] = TenantPreview{TenantID: t.TenantID(), Stages: make([]RenderedStage, len(stages))}
		for si, sp := range stages {
			field := fields[si]
			params, err := r.Render(field, sp.Params, stage.Data{
				TenantID: t.TenantID(), PlanID: t.PlanID(), TaskID: t.ID(), Attempt: 1,
				Params: t.Params(), Outputs: placeholders[si],
			})
			if err == nil && !sp.UsesOutputs() {
				h, _ := s.Kinds.Handler(sp.Kind)
				if pv, ok := h.(stage.ParamValidator); ok {
					if verr := pv.ValidateParams(params); verr != nil {
						err = paramError(field, verr)
					}
				}
			}
			if err != nil {
				return nil, tenantError(ti, t.TenantID(), err)
			}
			previews[ti].Stages[si] = RenderedStage{Name: sp.Name, Kind: sp.Kind, Params: params}
		}
	}
	return previews, nil
}

func tenantError(i int, tenantID string, err error) error {
	var fe *stage.FieldError
	if errors.As(err, &fe) {
		return invalid(fe.Field, fmt.Sprintf("for tenant %q (tenants[%d]): %s", tenantID, i, fe.Reason))
	}
	return invalid(fmt.Sprintf("tenants[%d]", i), err.Error())
}

// conflicts lists the tenants whose latest task has not ended (a dry run's preview of the
// store's check).
func (s *Service) conflicts(ctx context.Context, tenants []TenantInput) ([]string, error) {
	var out []string
	for _, tn := range tenants {
		t, err := s.Tasks.Latest(ctx, tn.ID)
		if errors.Is(err, task.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !t.Status().Terminal() {
			out = append(out, tn.ID)
		}
	}
	return out, nil
}

func asValidation(err error) error {
	var fe *stage.FieldError
	if errors.As(err, &fe) {
		return invalid(fe.Field, fe.Reason)
	}
	return err
}

// paramError names the param a kind's validator refused, under the stage's params field.
func paramError(field string, err error) error {
	var fe *stage.FieldError
	if errors.As(err, &fe) {
		return &stage.FieldError{Field: field + "." + fe.Field, Reason: fe.Reason, Err: fe.Err}
	}
	return &stage.FieldError{Field: field, Reason: err.Error()}
}
