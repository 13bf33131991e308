package plan

import (
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/executor-dev/executor/domain/stage"
)

// Limits of a plan's settings.
const (
	DefaultMaxConcurrency = 5
	MaxMaxConcurrency     = 1000
	MaxStartRate          = 60000 // task starts per minute: 1,000 a second
)

// Draft is what a plan is made from. Stage specs must already be validated (stage.Spec.Validate).
type Draft struct {
	ID             string // a ULID, chosen by the caller so tasks can refer to it
	Name           string
	Labels         map[string]string
	Stages         []stage.Spec
	TaskIDs        []string // in submission order
	MaxConcurrency int      // 0: DefaultMaxConcurrency
	FailureBudget  int      // 0: no budget
	StartAt        time.Time
	IdempotencyKey string
	// RequestHash identifies the submission's content (app: a SHA-256 of the normalised
	// request), so that a repeated IdempotencyKey with another content can be told apart.
	RequestHash string
	Canary      Canary // Tenants 0: no canary wave; shorthand for a two-ring Rollout
	StartRate   int    // task starts per minute; 0: as fast as concurrency allows
	// Rollout rolls the plan out in rings (no waves: none); TaskIDs must then be in ring
	// order, as Rollout.Bounds places them (Rollout.Deal).
	Rollout Rollout
	// OnFailure is what a task that fails sets off ("": OnFailureNone).
	OnFailure OnFailure
	// Approvers is who may decide on the plan's rings (and its gates without a rule of their
	// own), and how many approvals pass one; nil: any operator, one approval.
	Approvers *stage.Approvers
	// SubmittedBy is who submitted the plan (the token's holder).
	SubmittedBy string
	// Notify is where the plan's notifications go (none: nowhere).
	Notify []Destination
}

// Plan is one rollout of a stage template to many tenants.
type Plan struct {
	id             string
	name           string
	labels         map[string]string
	stages         []stage.Spec
	taskIDs        []string
	maxConcurrency int
	failureBudget  int
	startAt        time.Time
	idempotencyKey string
	requestHash    string
	canary         Canary
	startRate      int
	onFailure      OnFailure
	rollout        Rollout      // the canary's two rings, for a canary plan
	ring           Ring         // where the rollout stands (zero without one)
	analysis       RingAnalysis // what the analyses of the latest bake measured
	status         Status
	createdAt      time.Time
	startedAt      time.Time
	finishedAt     time.Time
	version        uint64 // of the stored plan this copy derives from (Version)
	reason         string // why a PAUSED plan was paused by the executor itself ("" for an operator's pause)
	approvers      *stage.Approvers
	submittedBy    string
	decisions      []RingDecision // oldest first, at most MaxDecisions
	notify         []Destination
	notices        []Notice // oldest first, at most MaxNotices
	noticeSeq      uint64   // the last notice's sequence number
}

// New validates d and returns a PENDING plan, or SCHEDULED when StartAt is after now.
func New(d Draft, now time.Time) (*Plan, error) {
	if d.MaxConcurrency == 0 {
		d.MaxConcurrency = DefaultMaxConcurrency
	}
	status := Pending
	if d.StartAt.After(now) {
		status = Scheduled
	}
	now = now.UTC()
	p := &Plan{
		id: d.ID, name: d.Name, labels: d.Labels, stages: d.Stages, taskIDs: d.TaskIDs,
		maxConcurrency: d.MaxConcurrency, failureBudget: d.FailureBudget, startAt: d.StartAt.UTC(),
		idempotencyKey: d.IdempotencyKey, requestHash: d.RequestHash, canary: d.Canary, startRate: d.StartRate,
		status: status, createdAt: now, onFailure: d.OnFailure.orNone(),
		approvers: d.Approvers, submittedBy: d.SubmittedBy, notify: d.Notify,
	}
	if d.Canary.Tenants > 0 && d.Rollout.Enabled() {
		return nil, &stage.FieldError{Field: "canary", Reason: "a plan has a canary or waves, not both", Err: ErrInvalid}
	}
	p.rollout = d.Rollout
	if d.Canary.Tenants > 0 {
		p.rollout = d.Canary.rollout(len(d.TaskIDs))
	}
	if p.rollout.Enabled() {
		p.ring = Ring{Phase: RingRunning, Since: now}
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Plan) check() error {
	bad := func(field, format string, args ...any) error {
		return &stage.FieldError{Field: field, Reason: fmt.Sprintf(format, args...), Err: ErrInvalid}
	}
	if _, err := ulid.ParseStrict(p.id); err != nil {
		return bad("planId", "must be a ULID")
	}
	if p.maxConcurrency < 1 || p.maxConcurrency > MaxMaxConcurrency {
		return bad("maxConcurrency", "must be between 1 and %d", MaxMaxConcurrency)
	}
	if p.failureBudget < 0 {
		return bad("failureBudget", "must not be negative")
	}
	if p.startRate < 0 || p.startRate > MaxStartRate {
		return bad("startRate", "must be between 0 (no pacing) and %d task starts per minute", MaxStartRate)
	}
	if err := p.approvers.Validate("approvers"); err != nil {
		return err
	}
	if len(p.notify) > MaxDestinations {
		return bad("notify", "at most %d destinations", MaxDestinations)
	}
	for i, d := range p.notify {
		if err := d.Validate(i); err != nil {
			return err
		}
	}
	if !p.onFailure.Valid() {
		return bad("onFailure", "must be one of %s", OnFailures)
	}
	if len(p.stages) == 0 {
		return bad("stages", "at least one stage is required")
	}
	names := make(map[string]int, len(p.stages))
	for i, s := range p.stages {
		if j, dup := names[s.Name]; dup {
			return bad(fmt.Sprintf("stages[%d].name", i), "duplicates stages[%d].name %q", j, s.Name)
		}
		names[s.Name] = i
	}
	if len(p.taskIDs) == 0 {
		return bad("tenants", "at least one tenant is required")
	}
	if err := p.canary.check(len(p.taskIDs), bad); err != nil {
		return err
	}
	if err := p.rollout.check(bad); err != nil {
		return err
	}
	if p.rollout.Enabled() {
		if err := p.rollout.checkBounds(len(p.taskIDs)); err != nil {
			return bad("waves", "%v", err)
		}
	}
	if err := p.checkRing(); err != nil {
		return bad("ring", "%v", err)
	}
	if err := p.checkAnalysis(); err != nil {
		return bad("analysis", "%v", err)
	}
	ids := make(map[string]struct{}, len(p.taskIDs))
	for _, id := range p.taskIDs {
		if _, dup := ids[id]; dup {
			return bad("taskIds", "duplicate task id %s", id)
		}
		ids[id] = struct{}{}
	}
	return nil
}

// ID returns the plan's ULID.
func (p *Plan) ID() string { return p.id }

// Name returns the plan's name.
func (p *Plan) Name() string { return p.name }

// Labels returns the plan's labels (shared; do not modify).
func (p *Plan) Labels() map[string]string { return p.labels }

// Stages returns the stage template (shared; do not modify).
func (p *Plan) Stages() []stage.Spec { return p.stages }

// TaskIDs returns the tasks' ids in submission order (shared; do not modify).
func (p *Plan) TaskIDs() []string { return p.taskIDs }

// MaxConcurrency returns how many of the plan's tasks may run at once.
func (p *Plan) MaxConcurrency() int { return p.maxConcurrency }

// FailureBudget returns after how many failed tasks no new task starts (0: no budget).
func (p *Plan) FailureBudget() int { return p.failureBudget }

// StartAt returns when a scheduled plan starts (zero: at once).
func (p *Plan) StartAt() time.Time { return p.startAt }

// OnFailure returns what a task of the plan that fails sets off.
func (p *Plan) OnFailure() OnFailure { return p.onFailure }

// StartRate returns how many of the plan's tasks may start per minute (0: no pacing).
func (p *Plan) StartRate() int { return p.startRate }

// IdempotencyKey returns the key the plan was submitted with, if any.
func (p *Plan) IdempotencyKey() string { return p.idempotencyKey }

// RequestHash returns what identifies the content the plan was submitted with (Draft); ""
// for plans stored before it was recorded.
func (p *Plan) RequestHash() string { return p.requestHash }

// Status returns the plan's status.
func (p *Plan) Status() Status { return p.status }

// CreatedAt returns when the plan was submitted.
func (p *Plan) CreatedAt() time.Time { return p.createdAt }

// StartedAt returns when the plan started running (zero before).
func (p *Plan) StartedAt() time.Time { return p.startedAt }

// FinishedAt returns when the plan ended (zero while it has not).
func (p *Plan) FinishedAt() time.Time { return p.finishedAt }

// Reason returns why the plan is PAUSED when the executor paused it itself (an executor
// running its tasks was lost: the reason names it and the interrupted tenants); "" for an
// operator's pause and for a plan that is not PAUSED.
func (p *Plan) Reason() string { return p.reason }

// Version returns the version of the stored plan this copy derives from: 0 at creation, +1 per
// write the store accepted. A store accepts a write only from a copy at its stored version
// (compare-and-set).
func (p *Plan) Version() uint64 { return p.version }

// Stored records that a store accepted this copy's changes as version v. Only stores call it.
func (p *Plan) Stored(v uint64) { p.version = v }
