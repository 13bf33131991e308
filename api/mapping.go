package api

import (
	"time"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/event"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

func stageRefs(specs []stage.Spec) []StageRef {
	out := make([]StageRef, len(specs))
	for i, s := range specs {
		out[i] = StageRef{Name: s.Name, Kind: s.Kind}
	}
	return out
}

// PlanFrom maps a plan view to its wire form.
func PlanFrom(v app.PlanView) Plan {
	p := v.Plan
	progress := map[string]int{"total": v.Progress.Total}
	for _, s := range task.Statuses {
		progress[string(s)] = v.Progress.Counts[s]
	}
	if n := len(v.Progress.Missing); n > 0 {
		progress[ProgressMissing] = n
	}
	return Plan{
		PlanID: p.ID(), Name: p.Name(), Labels: p.Labels(), Status: string(p.Status()),
		MaxConcurrency: p.MaxConcurrency(), FailureBudget: p.FailureBudget(),
		Stages: stageRefs(p.Stages()), TaskIDs: p.TaskIDs(), Progress: progress, MissingTasks: MissingFrom(v.Progress.Missing),
		StartAt: timePtr(p.StartAt()), StartRate: p.StartRate(), Canary: canaryFrom(p), Rings: ringsFrom(p, time.Now()), Reason: p.Reason(),
		CreatedAt: p.CreatedAt().UTC(), StartedAt: timePtr(p.StartedAt()), FinishedAt: timePtr(p.FinishedAt()),
	}
}

// ProgressMissing is the key of a plan's progress counting the tasks the store no longer
// holds; present only when there are some.
const ProgressMissing = "MISSING"

// MissingFrom maps the tasks a store no longer holds to their wire form (nil when none).
func MissingFrom(missing []app.MissingTask) []MissingTask {
	if len(missing) == 0 {
		return nil
	}
	out := make([]MissingTask, len(missing))
	for i, m := range missing {
		out[i] = MissingTask{TaskID: m.TaskID, Index: m.Index}
	}
	return out
}

// canaryFrom is the plan's canary wave with its phase, nil without one.
func canaryFrom(p *plan.Plan) *Canary {
	c := p.Canary()
	if c.Tenants == 0 {
		return nil
	}
	return &Canary{Tenants: c.Tenants, Then: string(c.Then), Phase: string(p.Phase())}
}

// TaskFrom maps a task view to its wire form. Lease and checkpoint are omitted when the view
// has none (task listings).
func TaskFrom(v app.TaskView, withLease bool) Task {
	t := v.Task
	out := Task{
		TaskID: t.ID(), TenantID: t.TenantID(), PlanID: t.PlanID(), Status: string(t.Status()),
		Attempt: t.Attempt(), CurrentStage: t.CurrentStage(), Stages: stageRefs(t.Stages()),
		PauseRequested: t.PauseRequested(), Executor: t.Executor(), CreatedAt: t.CreatedAt().UTC(),
		StartedAt: timePtr(t.StartedAt()), FinishedAt: timePtr(t.FinishedAt()),
		UpdatedAt: t.UpdatedAt().UTC(), Attempts: []Attempt{},
	}
	if i := t.CurrentStage(); i < len(t.Stages()) {
		out.CurrentStageName = t.Stages()[i].Name
	}
	if f := t.LastError(); f != nil {
		out.LastError = &Failure{Stage: f.Stage, Attempt: f.Attempt, Class: string(f.Class), Message: f.Message, Code: f.Code}
	}
	for _, a := range t.Ledger() {
		out.Attempts = append(out.Attempts, Attempt{
			StageIndex: a.StageIndex, Stage: a.Stage, Run: a.Run, Attempt: a.Attempt,
			StartedAt: a.StartedAt.UTC(), EndedAt: a.EndedAt.UTC(), Outcome: string(a.Outcome),
			Class: string(a.Class), Error: a.Error, Code: a.Code, BackoffMs: a.Backoff.Milliseconds(),
		})
	}
	if withLease {
		out.Lease = &Lease{Held: v.Lease.Held, Owner: v.Lease.Holder.Owner, TTLMs: v.Lease.Holder.TTL.Milliseconds()}
	}
	if cp := v.Checkpoint; cp != nil {
		out.Checkpoint = &CheckpointSummary{
			LastCompletedStageIndex: cp.LastCompletedStageIndex(), CompletedStages: cp.CompletedStages(),
			SavedAt: cp.SavedAt().UTC(),
		}
	}
	out.Wait, out.Decision = waitFrom(t), decisionFrom(t)
	return out
}

// waitFrom is why a WAITING task waits, nil for any other.
func waitFrom(t *task.Task) *Wait {
	w := t.Wait()
	if w == nil {
		return nil
	}
	return &Wait{Stage: w.Stage, StageIndex: w.StageIndex, Reason: w.Reason, Message: w.Message, Since: w.Since.UTC()}
}

// decisionFrom is the task's latest gate decision, nil when none was made.
func decisionFrom(t *task.Task) *Decision {
	v := t.Verdict()
	if v == nil {
		return nil
	}
	out := &Decision{
		StageIndex: v.StageIndex, Run: v.Run, Approved: v.Approved, Comment: v.Comment, DecidedAt: v.DecidedAt.UTC(),
	}
	if stages := t.Stages(); v.StageIndex >= 0 && v.StageIndex < len(stages) {
		out.Stage = stages[v.StageIndex].Name
	}
	return out
}

// CheckpointFrom maps a checkpoint to its wire form.
func CheckpointFrom(tenantID string, cp *checkpoint.Checkpoint) Checkpoint {
	s := cp.State()
	return Checkpoint{
		TaskID: s.TaskID, TenantID: tenantID, LastCompletedStageIndex: s.LastCompleted,
		CompletedStages: s.CompletedStages, ContextData: s.ContextData, SavedAt: s.SavedAt.UTC(), Fence: s.Fence,
	}
}

// DryRunFrom maps a dry-run submission to its wire form. Conflicts is never nil.
func DryRunFrom(sub *app.Submission) DryRun {
	out := DryRun{DryRun: true, Tenants: make([]TenantPreview, len(sub.Preview)), Conflicts: []string{}}
	out.Conflicts = append(out.Conflicts, sub.Conflicts...)
	for i, tp := range sub.Preview {
		stages := make([]RenderedStage, len(tp.Stages))
		for j, s := range tp.Stages {
			stages[j] = RenderedStage{Name: s.Name, Kind: s.Kind, Params: s.Params}
		}
		out.Tenants[i] = TenantPreview{TenantID: tp.TenantID, Stages: stages}
	}
	for _, r := range sub.Rings {
		out.Rings = append(out.Rings, RingPreview{Wave: r.Wave, Tenants: append([]string{}, r.Tenants...)})
	}
	return out
}

// EventFrom maps a published event to its wire form, with id, the ID its watchers resume
// after (events.Entry.ID).
func EventFrom(id string, e event.Event) Event {
	out := Event{
		ID: id, Kind: string(e.Kind), At: e.At, PlanID: e.PlanID, TaskID: e.TaskID, TenantID: e.TenantID,
		Status: e.Status, Stage: e.Stage, StageName: e.StageName, Run: e.Run,
	}
	if a := e.Last; a != nil {
		out.LastAttempt = &EventAttempt{StageIndex: a.StageIndex, Stage: a.Stage, Attempt: a.Attempt, Outcome: a.Outcome, Class: a.Class}
	}
	if r := e.Ring; r != nil {
		out.Ring = &EventRing{Index: r.Index, Wave: r.Wave, State: r.State, BakeEndsAt: r.BakeEndsAt, Halt: r.Halt}
	}
	return out
}
