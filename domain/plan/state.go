package plan

import (
	"fmt"
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

// State is a plan's persisted form. Load turns it back into a Plan, re-checking invariants.
type State struct {
	ID             string
	Name           string
	Labels         map[string]string
	Stages         []stage.Spec
	TaskIDs        []string
	MaxConcurrency int
	FailureBudget  int
	StartAt        time.Time
	IdempotencyKey string
	RequestHash    string // see Plan.RequestHash
	Canary         Canary
	StartRate      int
	Rollout        Rollout      // without Canary; a canary plan's is derived from it
	Ring           Ring         // zero: from Phase (a canary plan stored before rings existed)
	Analysis       RingAnalysis // what the analyses of the latest bake measured
	Phase          Phase        // the canary phase Ring reads as ("" without a canary wave); Load reads it only without Ring
	Status         Status
	CreatedAt      time.Time
	StartedAt      time.Time
	FinishedAt     time.Time
	Version        uint64 // see Plan.Version
	Reason         string // see Plan.Reason
	OnFailure      OnFailure
	Approvers      *stage.Approvers // see Plan.Approvers
	SubmittedBy    string
	Decisions      []RingDecision // see Plan.Decisions
	Notify         []Destination  // see Plan.Notify
	Notices        []Notice       // see Plan.Notices; the last one's ID carries the sequence
}

// State returns the plan's persisted form.
func (p *Plan) State() State {
	s := State{
		ID: p.id, Name: p.name, Labels: p.labels, Stages: p.stages, TaskIDs: p.taskIDs,
		MaxConcurrency: p.maxConcurrency, FailureBudget: p.failureBudget, StartAt: p.startAt,
		IdempotencyKey: p.idempotencyKey, RequestHash: p.requestHash, Canary: p.canary, StartRate: p.startRate, Phase: p.Phase(),
		Ring: p.ring, Analysis: p.Analysis(), Status: p.status, CreatedAt: p.createdAt, StartedAt: p.startedAt, FinishedAt: p.finishedAt,
		Version: p.version, Reason: p.reason, OnFailure: p.onFailure,
		Approvers: p.approvers, SubmittedBy: p.submittedBy, Decisions: p.Decisions(),
		Notify: p.notify, Notices: p.Notices(),
	}
	if p.canary.Tenants == 0 {
		s.Rollout = p.rollout
	}
	return s
}

// Load rebuilds a plan from persisted state, refusing state that breaks an invariant.
func Load(s State) (*Plan, error) {
	if !s.Status.Valid() {
		return nil, fmt.Errorf("%w: %s: unknown status %q", ErrInvalid, s.ID, s.Status)
	}
	if s.Status.Terminal() && s.FinishedAt.IsZero() {
		return nil, fmt.Errorf("%w: %s: %s without finishedAt", ErrInvalid, s.ID, s.Status)
	}
	p := &Plan{
		id: s.ID, name: s.Name, labels: s.Labels, stages: s.Stages, taskIDs: s.TaskIDs,
		maxConcurrency: s.MaxConcurrency, failureBudget: s.FailureBudget, startAt: s.StartAt,
		idempotencyKey: s.IdempotencyKey, requestHash: s.RequestHash, canary: s.Canary, startRate: s.StartRate,
		rollout: s.Rollout, ring: s.Ring, analysis: s.Analysis, status: s.Status, createdAt: s.CreatedAt,
		startedAt: s.StartedAt, finishedAt: s.FinishedAt, version: s.Version, reason: s.Reason,
		onFailure: s.OnFailure.orNone(), approvers: s.Approvers, submittedBy: s.SubmittedBy,
		decisions: append([]RingDecision(nil), s.Decisions...), notify: s.Notify,
		notices: append([]Notice(nil), s.Notices...), noticeSeq: lastSeq(s.Notices),
	}
	if s.Canary.Tenants > 0 {
		if s.Rollout.Enabled() {
			return nil, fmt.Errorf("%w: %s: a canary and waves", ErrInvalid, s.ID)
		}
		p.rollout = s.Canary.rollout(len(s.TaskIDs))
		if s.Ring == (Ring{}) {
			var err error
			if p.ring, err = s.Phase.ring(s.CreatedAt); err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, s.ID, err)
			}
		}
	} else if s.Phase != "" {
		return nil, fmt.Errorf("%w: %s: phase %q without a canary wave", ErrInvalid, s.ID, s.Phase)
	}
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, s.ID, err)
	}
	return p, nil
}

// Clone returns an independent copy of the plan without re-checking it: a repository keeps
// one and hands out clones, so a caller's transitions never change the stored plan. The
// stage template, task ids and labels are immutable after New and stay shared.
func (p *Plan) Clone() *Plan {
	c := *p
	c.analysis = p.Analysis() // its records change in place
	return &c
}
