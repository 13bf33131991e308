package api

import (
	"time"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/wire"
)

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

func stageRefs(specs []stage.Spec) []wire.StageRef {
	out := make([]wire.StageRef, len(specs))
	for i, s := range specs {
		out[i] = wire.StageRef{Name: s.Name, Kind: s.Kind, Approvers: approversFrom(s.Approvers)}
		if s.Undo != nil {
			out[i].Undo = s.Undo.Kind
		}
	}
	return out
}

// PlanFrom maps a plan view to its wire form.
func PlanFrom(v app.PlanView) wire.Plan {
	p := v.Plan
	progress := map[string]int{"total": v.Progress.Total}
	for _, s := range task.Statuses {
		progress[string(s)] = v.Progress.Counts[s]
	}
	if n := len(v.Progress.Missing); n > 0 {
		progress[wire.ProgressMissing] = n
	}
	return wire.Plan{
		Kind:   wire.KindPlan,
		PlanID: p.ID(), Name: p.Name(), Labels: p.Labels(), Status: string(p.Status()), Outcome: v.Outcome(),
		MaxConcurrency: p.MaxConcurrency(), FailureBudget: p.FailureBudget(),
		Stages: stageRefs(p.Stages()), TaskIDs: p.TaskIDs(), Progress: progress, MissingTasks: MissingFrom(v.Progress.Missing),
		StartAt: timePtr(p.StartAt()), StartRate: p.StartRate(), OnFailure: string(p.OnFailure()), Canary: canaryFrom(p), Rings: ringsFrom(p, time.Now()), Reason: p.Reason(),
		CreatedAt: p.CreatedAt().UTC(), StartedAt: timePtr(p.StartedAt()), FinishedAt: timePtr(p.FinishedAt()),
		SubmittedBy: p.SubmittedBy(), Approvers: approversFrom(p.Approvers()), Decisions: ringDecisionsFrom(p),
		Notify: destinationsFrom(p.Notify()),
	}
}

// ringDecisionsFrom maps the decisions on a plan's rings (none: nil).
func ringDecisionsFrom(p *plan.Plan) []wire.RingDecision {
	ds := p.Decisions()
	if len(ds) == 0 {
		return nil
	}
	out := make([]wire.RingDecision, len(ds))
	waves := p.Rollout().Waves
	for i, d := range ds {
		out[i] = wire.RingDecision{Ring: d.Ring, Approval: approvalFrom(d.Decision), Partial: d.Partial}
		if d.Ring >= 0 && d.Ring < len(waves) {
			out[i].RingName = waves[d.Ring].Name
		}
	}
	return out
}

// MissingFrom maps the tasks a store no longer holds to their wire form (nil when none).
func MissingFrom(missing []app.MissingTask) []wire.MissingTask {
	if len(missing) == 0 {
		return nil
	}
	out := make([]wire.MissingTask, len(missing))
	for i, m := range missing {
		out[i] = wire.MissingTask{TaskID: m.TaskID, Index: m.Index}
	}
	return out
}

// canaryFrom is the plan's canary wave with its phase, nil without one.
func canaryFrom(p *plan.Plan) *wire.Canary {
	c := p.Canary()
	if c.Tenants == 0 {
		return nil
	}
	return &wire.Canary{Tenants: c.Tenants, Then: string(c.Then), Phase: string(p.Phase())}
}

// TaskFrom maps a task view to its wire form. Lease and checkpoint are omitted when the view
// has none (task listings); an attempt shows what it printed when the view holds its
// transcript.
func TaskFrom(v app.TaskView, withLease bool) wire.Task {
	t := v.Task
	out := wire.Task{
		TaskID: t.ID(), TenantID: t.TenantID(), PlanID: t.PlanID(), Status: string(t.Status()),
		Attempt: t.Attempt(), CurrentStage: t.CurrentStage(), Stages: stageRefs(t.Stages()),
		PauseRequested: t.PauseRequested(), PausedByPlan: t.PausedByPlan(), RollingBack: t.RollingBack(), RollbackRequested: t.RollbackRequested(), Executor: t.Executor(), CreatedAt: t.CreatedAt().UTC(),
		StartedAt: timePtr(t.StartedAt()), FinishedAt: timePtr(t.FinishedAt()),
		UpdatedAt: t.UpdatedAt().UTC(), Attempts: []wire.Attempt{},
	}
	switch i := t.CurrentStage(); {
	case t.RollingBack() && i > 0: // the stage a rollback undoes next
		out.CurrentStageName = t.Stages()[i-1].Name
	case !t.RollingBack() && i < len(t.Stages()):
		out.CurrentStageName = t.Stages()[i].Name
	}
	if f := t.LastError(); f != nil {
		out.LastError = &wire.Failure{Stage: f.Stage, Attempt: f.Attempt, Class: string(f.Class), Message: f.Message, Code: f.Code}
	}
	for _, a := range t.Ledger() {
		printed := v.Transcripts[a.Key()]
		out.Attempts = append(out.Attempts, wire.Attempt{
			StageIndex: a.StageIndex, Stage: a.Stage, Run: a.Run, Attempt: a.Attempt,
			StartedAt: a.StartedAt.UTC(), EndedAt: a.EndedAt.UTC(), Outcome: string(a.Outcome),
			Class: string(a.Class), Error: a.Error, Code: a.Code, BackoffMs: a.Backoff.Milliseconds(),
			Stdout: printed.Stdout, Stderr: printed.Stderr, Undo: a.Undo,
		})
	}
	if withLease {
		out.Lease = &wire.Lease{Held: v.Lease.Held, Owner: v.Lease.Holder.Owner, TTLMs: v.Lease.Holder.TTL.Milliseconds()}
	}
	if cp := v.Checkpoint; cp != nil {
		out.Checkpoint = &wire.CheckpointSummary{
			LastCompletedStageIndex: cp.LastCompletedStageIndex(), CompletedStages: nonNil(cp.CompletedStages()),
			SavedAt: cp.SavedAt().UTC(),
		}
	}
	out.Wait, out.Decision = waitFrom(t), decisionFrom(t)
	return out
}

// waitFrom is why a WAITING task waits, nil for any other.
func waitFrom(t *task.Task) *wire.Wait {
	w := t.Wait()
	if w == nil {
		return nil
	}
	out := &wire.Wait{Stage: w.Stage, StageIndex: w.StageIndex, Reason: w.Reason, Message: w.Message, Since: w.Since.UTC(),
		Approvals: approvalsFrom(w.Approvals), Needed: 1}
	if stages := t.Stages(); w.StageIndex >= 0 && w.StageIndex < len(stages) {
		out.Needed = stages[w.StageIndex].Approvers.Needed()
	}
	return out
}

// decisionFrom is the task's latest gate decision, nil when none was made.
func decisionFrom(t *task.Task) *wire.Decision {
	v := t.Verdict()
	if v == nil {
		return nil
	}
	out := &wire.Decision{
		StageIndex: v.StageIndex, Run: v.Run, Approved: v.Approved, Comment: v.Comment, DecidedAt: v.DecidedAt.UTC(),
		By: v.By, Role: v.Role, Earlier: approvalsFrom(v.Earlier),
	}
	if stages := t.Stages(); v.StageIndex >= 0 && v.StageIndex < len(stages) {
		out.Stage = stages[v.StageIndex].Name
	}
	return out
}

// CheckpointFrom maps a checkpoint to its wire form.
func CheckpointFrom(tenantID string, cp *checkpoint.Checkpoint) wire.Checkpoint {
	s := cp.State()
	out := wire.Checkpoint{
		TaskID: s.TaskID, TenantID: tenantID, LastCompletedStageIndex: s.LastCompleted,
		CompletedStages: nonNil(s.CompletedStages), ContextData: s.ContextData, SavedAt: s.SavedAt.UTC(), Fence: s.Fence,
	}
	if p := s.Progress; p != nil {
		out.Progress = &wire.Progress{Stage: p.Stage, Data: p.Data}
	}
	return out
}

// nonNil is stages, or an empty list for none: the wire's arrays are never null.
func nonNil(stages []string) []string {
	if stages == nil {
		return []string{}
	}
	return stages
}
