package app

import (
	"context"
	"errors"
	"regexp"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/executor-dev/executor/domain/audit"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// MaxNameLength bounds a plan's name.
const MaxNameLength = 200

var labelKeyPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,62}$`)

// TenantInput is one tenant of a submission.
type TenantInput struct {
	ID     string
	Params map[string]any
	Wave   string // the wave (by name) the tenant is pinned to; "": dealt by the rollout's order
}

// SubmitRequest is a plan submission.
type SubmitRequest struct {
	Name           string
	Labels         map[string]string
	MaxConcurrency int // 0: plan.DefaultMaxConcurrency
	FailureBudget  int // 0: none
	StartAt        time.Time
	StartRate      int // task starts per minute; 0: no pacing
	// OnFailure is what a task that fails sets off ("": plan.OnFailureNone).
	OnFailure plan.OnFailure
	// Approvers is who may decide on the plan's rings and at its gates that have no rule of
	// their own (nil: any operator, one approval).
	Approvers *stage.Approvers
	// Notify is where the plan's notifications go.
	Notify []plan.Destination
	Canary plan.Canary
	// Rollout rolls the plan out in rings (no waves: none). Bounds are computed; a wave's
	// empty name, then and health kind default to wave-<n>, auto and http; the order to
	// submission; a shuffle's seed to one derived from the tenant ids.
	Rollout        plan.Rollout
	Stages         []stage.Spec
	Tenants        []TenantInput
	IdempotencyKey string
	DryRun         bool
	// Page is the part of a dry run's tenants whose rendered stages it answers (every
	// tenant is rendered and checked all the same); the zero value: the first
	// DefaultPreviewLimit.
	Page PreviewPage
	// Violations are what the transport found wrong while decoding the request (unknown
	// fields, values of the wrong type): they are reported with every other check's, and
	// nothing is created. Fields at or under one of them are not reported again.
	Violations []FieldViolation
}

// RenderedStage is a stage as it would run for one tenant (outputs of earlier stages are
// placeholders in a preview).
type RenderedStage struct {
	Name   string
	Kind   string
	Params map[string]any
	// Measurement is a dry run's one measurement of an analysis stage (a kind that measures,
	// whose params read no output of an earlier stage); nil otherwise.
	Measurement *stage.Measurement
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
	Tenants   int             // dry run only: how many tenants the plan has
	Page      PreviewPage     // dry run only: the page Preview is, with its defaults
	Preview   []TenantPreview // dry run only: the page's tenants, in submission order
	Conflicts []string        // dry run only: tenants whose latest task has not ended
	// ConflictHolders are the tasks of the first conflicting tenants (at most
	// MaxConflictsNamed): their plans and statuses. Dry run only.
	ConflictHolders []ConflictHolder
	Rings           []RingPreview // dry run only: which tenants fall in which ring (none without waves)
	// Notes are what the submitter should know of how the plan will run that its request
	// does not say: a maxConcurrency above this executor's workers (concurrencyNotes). A
	// created plan's and a dry run's; none for a replay.
	Notes []string
}

// Submit validates a plan, renders every tenant's stages, checks that no tenant has a task
// that has not ended, and creates and launches the plan. Nothing is created when any check
// fails (or on a dry run). Once the creation begins, ctx's cancellation (a client that went
// away) no longer stops it: the plan is created and launched all the same (see
// createAndLaunch).
func (s *Service) Submit(ctx context.Context, req SubmitRequest) (*Submission, error) {
	var hash string // recorded with the plan when it has a key, compared by a repeated key
	if req.IdempotencyKey != "" && !req.DryRun {
		hash = requestHash(req)
	}
	if sub, err := s.replay(ctx, req, hash); sub != nil || err != nil {
		return sub, err // fast path; checked again under the lock
	}
	planID := ulid.Make().String()
	now := s.now()
	elsewhere, err := s.kindsElsewhere(ctx, req)
	if err != nil {
		return nil, err
	}
	stages, rollout, tasks, preview, err := s.check(ctx, req, planID, now, elsewhere)
	if err != nil {
		return nil, err
	}
	submitter := originOf(ctx).Actor
	inSubmissionOrder := tasks
	rollout, tasks, rings, err := deal(rollout, req, tasks)
	if err != nil {
		return nil, asValidation(err)
	}
	taskIDs := make([]string, len(tasks))
	for i, t := range tasks {
		taskIDs[i] = t.ID()
	}
	p, err := plan.New(plan.Draft{
		ID: planID, Name: req.Name, Labels: req.Labels, Stages: stages, TaskIDs: taskIDs,
		MaxConcurrency: req.MaxConcurrency, FailureBudget: req.FailureBudget, StartAt: req.StartAt,
		IdempotencyKey: req.IdempotencyKey, RequestHash: hash, Canary: req.Canary, StartRate: req.StartRate, OnFailure: req.OnFailure,
		Rollout: rollout, Approvers: submittedRule(req.Approvers, submitter), SubmittedBy: submitter, Notify: req.Notify,
	}, now)
	if err != nil {
		return nil, asValidation(err)
	}

	if !req.DryRun && s.notReady() {
		return nil, ErrNotReady
	}
	if !req.DryRun && s.degraded() {
		return nil, ErrUnavailable
	}
	if err := s.refuseWork(); err != nil && !req.DryRun {
		return nil, err
	}
	if req.DryRun {
		conflicts, holders, err := s.conflicts(ctx, req.Tenants)
		if err != nil {
			return nil, err
		}
		s.measureDryRun(ctx, req, stages, inSubmissionOrder, preview, rollout, rings)
		return &Submission{Tenants: len(tasks), Page: req.Page.withDefaults(), Preview: preview, Conflicts: conflicts,
			ConflictHolders: holders, Rings: rings, Notes: s.concurrencyNotes(p)}, nil
	}
	s.submitMu.Lock() // one idempotency key, one plan
	defer s.submitMu.Unlock()
	if sub, err := s.replay(ctx, req, hash); sub != nil || err != nil {
		return sub, err
	}
	if err := s.checkQueue(len(tasks)); err != nil { // under submitMu: Launch below queues the tasks
		return nil, err
	}
	// The store checks the tenants as one step with the creation, for every executor. From
	// here on the caller going away cancels nothing (createAndLaunch).
	if err := s.audited(ctx, submission(req, planID, len(tasks)), func(ctx context.Context) ([]audit.Attr, error) {
		return nil, s.createAndLaunch(ctx, p, tasks)
	}); err != nil {
		return nil, err
	}
	// The tasks were all just written PENDING: no need to read them back (a 10,000-tenant plan).
	statuses := make([]task.Status, len(tasks))
	for i, t := range tasks {
		statuses[i] = t.Status()
	}
	return &Submission{Plan: PlanView{Plan: p, Progress: progressOf(statuses)}, Notes: s.concurrencyNotes(p)}, nil
}

// submission is the audit record's action of a submission of req as plan planID.
func submission(req SubmitRequest, planID string, tenants int) action {
	a := action{name: "submit", planID: planID, created: true, request: []audit.Attr{attr("name", req.Name), attrInt("tenants", tenants)}}
	if req.IdempotencyKey != "" {
		a.request = append(a.request, attr("idempotencyKey", req.IdempotencyKey))
	}
	return a
}

// replay returns the plan first submitted with the request's idempotency key, if any, when
// it was submitted with the same content (hash, see requestHash); another content is an
// *IdempotencyMismatchError. A plan stored before its hash was recorded is replayed whatever
// the content, as it was then.
func (s *Service) replay(ctx context.Context, req SubmitRequest, hash string) (*Submission, error) {
	if req.IdempotencyKey == "" || req.DryRun || len(req.Violations) > 0 { // an invalid request is refused
		return nil, nil
	}
	p, err := s.plans.ByIdempotencyKey(ctx, req.IdempotencyKey)
	if errors.Is(err, plan.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if p.RequestHash() != "" && p.RequestHash() != hash {
		return nil, &IdempotencyMismatchError{Key: req.IdempotencyKey, PlanID: p.ID()}
	}
	// The executor that took the first submission may have died before it launched the plan
	// (the client retries because it got no answer): the plan is launched now if it was not.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), LaunchTimeout)
	rerr := s.launcher.Relaunch(rctx, p.ID())
	cancel()
	if p, err = s.plans.Plan(ctx, p.ID()); err != nil {
		return nil, err
	}
	if rerr != nil && p.Status() == plan.Pending { // not launched, by this relaunch nor another
		return nil, rerr
	}
	v, err := s.view(ctx, p)
	return &Submission{Plan: v, Replayed: true}, err
}

// conflicts lists the tenants whose latest task has not ended (a dry run's preview of the
// store's check), and the tasks of the first MaxConflictsNamed of them.
func (s *Service) conflicts(ctx context.Context, tenants []TenantInput) ([]string, []ConflictHolder, error) {
	var out []string
	var holders []ConflictHolder
	for _, tn := range tenants {
		t, err := s.tasks.Latest(ctx, tn.ID)
		if errors.Is(err, task.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if t.Status().Terminal() {
			continue
		}
		out = append(out, tn.ID)
		if len(holders) < MaxConflictsNamed {
			holders = append(holders, ConflictHolder{Tenant: tn.ID, PlanID: t.PlanID(), TaskID: t.ID(), Status: t.Status()})
		}
	}
	return out, holders, nil
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
