package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/wire"
)

// A task rolling back reads as such wherever a task is shown: its STAGE is the undo it runs
// next (undo:<stage>), a line says how far the rollback is and how to go on, its undo attempts
// are labelled undo:<stage> in the ledger and above what they printed.
func TestRollbackTables(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	stages := []wire.StageRef{{Name: "push", Kind: "noop", Undo: "exec"}, {Name: "config", Kind: "noop", Undo: "exec"}, {Name: "verify", Kind: "noop"}}
	base := wire.Task{TenantID: "t1", TaskID: "01JTASK", Stages: stages, RollingBack: true}
	with := func(status string, current int, f func(*wire.Task)) wire.Task {
		tk := base
		tk.Status, tk.CurrentStage = status, current
		if f != nil {
			f(&tk)
		}
		return tk
	}
	tests := []struct {
		name    string
		task    wire.Task
		detail  bool
		want    []string
		wantRe  []string
		notWant []string
	}{
		{
			name: "rolling back", task: with("RUNNING", 3, nil),
			want: []string{"undo:verify (3/3)", "\nrolling back: 3 of 3 stage(s) still applied, undone newest first\n"},
		},
		{
			name: "rolled back", task: with("ROLLED_BACK", 0, nil),
			want:    []string{"undone (0/3)", "\nrolled back: every stage it completed is undone (or, without an undo, passed over); 'executor retry --tenant t1' runs it forward again\n"},
			notWant: []string{"rolling back"},
		},
		{
			name: "rollback failed", task: with("ROLLBACK_FAILED", 2, func(tk *wire.Task) {
				tk.LastError = &wire.Failure{Stage: "undo:config", Class: "permanent", Message: "exit 3"}
			}),
			want: []string{"undo:config (2/3)", "\nrolling back stopped: undo:config failed, 2 of 3 stage(s) still applied; 'executor rollback --tenant t1' tries it again and goes on\n"},
		},
		{
			name: "rollback paused", task: with("PAUSED", 1, nil),
			want: []string{"undo:push (1/3)", "\nrolling back, PAUSED: 1 of 3 stage(s) still applied; 'executor resume --tenant t1' goes on\n"},
		},
		{
			name: "rollback interrupted", task: with("INTERRUPTED", 1, nil),
			want: []string{"\nrolling back, INTERRUPTED: 1 of 3 stage(s) still applied; 'executor rollback --tenant t1' goes on\n"},
		},
		{
			name: "forward task", task: wire.Task{TenantID: "t1", Status: "RUNNING", Stages: stages, CurrentStage: 1, CurrentStageName: "config"},
			want: []string{"config (2/3)"}, notWant: []string{"undo:", "rolling back", "rolled back"},
		},
		{
			name: "ledger and outputs of a rollback", detail: true, task: with("ROLLBACK_FAILED", 2, func(tk *wire.Task) {
				tk.Attempts = []wire.Attempt{
					{StageIndex: 0, Stage: "push", Run: 1, Attempt: 1, Outcome: "succeeded", Stdout: "pushed\n", StartedAt: at, EndedAt: at},
					{StageIndex: 1, Stage: "config", Run: 1, Attempt: 1, Outcome: "succeeded", StartedAt: at, EndedAt: at},
					{StageIndex: 1, Stage: "config", Run: 2, Attempt: 1, Outcome: "failed", Undo: true, Stderr: "cannot revert\n", StartedAt: at, EndedAt: at},
				}
			}),
			wantRe: []string{`(?m)^0 push\s+1\s+1\s+succeeded`, `(?m)^1 config\s+1\s+1\s+succeeded`, `(?m)^1 undo:config\s+2\s+1\s+failed`},
			want: []string{
				"output of stage push (1/3), run 1, attempt 1 (succeeded):\n  stdout:\n    pushed\n",
				"output of stage undo:config (2/3), run 2, attempt 1 (failed):\n  stderr:\n    cannot revert\n",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			table := taskTable(tt.task)
			if tt.detail {
				table = taskDetailTable(tt.task)
			}
			out := render(t, table)
			for _, s := range tt.want {
				assert.Contains(t, out, s)
			}
			for _, re := range tt.wantRe {
				assert.Regexp(t, re, out)
			}
			for _, s := range tt.notWant {
				assert.NotContains(t, out, s)
			}
		})
	}
}

// status shows the last output of each stage and, apart, of each stage's undo: an undo's
// output does not hide what the stage itself printed.
func TestLastOfEachStageKeepsUndosApart(t *testing.T) {
	t.Parallel()
	attempts := []wire.Attempt{
		{StageIndex: 0, Stage: "push", Run: 1, Attempt: 1, Stdout: "first"},
		{StageIndex: 0, Stage: "push", Run: 1, Attempt: 2, Stdout: "pushed"},
		{StageIndex: 0, Stage: "push", Run: 2, Attempt: 1, Undo: true, Stdout: "reverted"},
	}
	got := lastOfEachStage(attempts)
	assert.Equal(t, []wire.Attempt{attempts[1], attempts[2]}, got)
}

// An undo event reads "undid <stage>", named as a STAGE cell names it.
func TestUndoEventLine(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	e := wire.Event{Kind: client.EventUndo, At: at, PlanID: "01JPLAN", TenantID: "t1", Status: "RUNNING", Stage: 1, StageName: "config", Run: 2}
	assert.Equal(t, "2026-11-28T10:00:00.000Z  undo   01JPLAN  t1  RUNNING      undid config (2/3), run 2",
		eventLine(e, []string{"push", "config", "verify"}, "", at))
}

// plan bulk takes --ring on every action, and the rollback action.
func TestBulkActionsTakeRing(t *testing.T) {
	t.Parallel()
	a := &invocation{}
	cmd := a.planBulkCmd()
	var names []string
	for _, c := range cmd.Commands() {
		names = append(names, c.Name())
		assert.NotNil(t, c.Flags().Lookup("ring"), "%s --ring", c.Name())
	}
	assert.ElementsMatch(t, []string{"approve", "reject", "retry", "cancel", "rollback", "skip"}, names)
}

// A RUNNING task asked to roll back says that its own run will turn back.
func TestARequestedRollbackIsShown(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	taskRollbackLines(&b, wire.Task{TenantID: "t1", Status: "RUNNING", CurrentStage: 2,
		Stages: []wire.StageRef{{Name: "a"}, {Name: "b"}, {Name: "c"}}, RollbackRequested: true})
	assert.Equal(t, "rollback requested: its run turns back at its next stage boundary, or as its stage ends (2 stage(s) completed so far)\n", b.String())
}

// The summary's "retry them" hint says when the plan has tasks a bulk retry leaves out by
// default (it takes FAILED and INTERRUPTED): rolled back, cancelled.
func TestTheRetryHintNamesTheStatusesItLeavesOut(t *testing.T) {
	t.Parallel()
	assert.Empty(t, otherRetryable(map[string]int{"FAILED": 3, "COMPLETED": 1}))
	assert.Equal(t, "CANCELLED,ROLLED_BACK", otherRetryable(map[string]int{"ROLLED_BACK": 1, "CANCELLED": 2, "ROLLBACK_FAILED": 0}))
	out := render(t, summaryTable(wire.PlanSummary{PlanID: "01JPLAN", Total: 2,
		Statuses:       map[string]int{"COMPLETED": 1, "ROLLED_BACK": 1},
		FailureClasses: []wire.ClassCount{{Class: "permanent", Count: 1, SampleTenantID: "t1", SampleMessage: "404"}}}))
	assert.Contains(t, out, "add --status ROLLED_BACK for the others of the class")
}
