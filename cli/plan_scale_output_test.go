package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/wire"
)

// The JSON of plan tasks, written page by page, is byte for byte what printing the whole
// list at once writes.
func TestTaskListWriterJSON(t *testing.T) {
	t.Parallel()
	task := func(tenant string) wire.Task {
		return wire.Task{TaskID: "01J" + tenant, TenantID: tenant, Status: "FAILED", Attempt: 1,
			LastError: &wire.Failure{Class: "permanent", Message: "<html> & co"}}
	}
	missing := []wire.MissingTask{{TaskID: "01JGONE", Index: 3}}
	tests := []struct {
		name  string
		pages []wire.TaskList
	}{
		{name: "no page at all"},
		{name: "one empty page", pages: []wire.TaskList{{Tasks: []wire.Task{}}}},
		{name: "one page", pages: []wire.TaskList{{Tasks: []wire.Task{task("a"), task("b")}, Total: 2}}},
		{name: "pages, an empty one among them, missing tasks", pages: []wire.TaskList{
			{Tasks: []wire.Task{task("a")}, Total: 3, NextCursor: "c1", MissingTasks: missing},
			{Tasks: []wire.Task{}, Total: 3, NextCursor: "c2", MissingTasks: missing},
			{Tasks: []wire.Task{task("b"), task("c")}, Total: 3, MissingTasks: missing},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var streamed, whole bytes.Buffer
			w := (&invocation{streams: streams{stdout: &streamed}, output: OutputJSON}).taskListWriter()
			all := wire.TaskList{Tasks: []wire.Task{}}
			for i := range tt.pages {
				require.NoError(t, w.page(&tt.pages[i]))
				all.Tasks = append(all.Tasks, tt.pages[i].Tasks...)
				all.Total, all.MissingTasks = tt.pages[i].Total, tt.pages[i].MissingTasks
			}
			require.NoError(t, w.end())
			require.NoError(t, (&invocation{streams: streams{stdout: &whole}, output: OutputJSON}).print(&all, nil))
			assert.Equal(t, whole.String(), streamed.String())
		})
	}
}

func TestPlanScaleTables(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	summary := wire.PlanSummary{
		PlanID: "01JPLAN", Status: "RUNNING", Total: 100000, Missing: 2,
		Statuses: map[string]int{"PENDING": 61200, "RUNNING": 50, "WAITING": 38000, "FAILED": 748, "COMPLETED": 0, "LOST": 0},
		Stages: []wire.StageCounts{
			{Index: 0, Name: "push-config", Counts: map[string]int{"PENDING": 61200, "RUNNING": 20}},
			{Index: 1, Name: "canary-check", Counts: map[string]int{"RUNNING": 30, "FAILED": 748}},
			{Index: 2, Name: "gate", Counts: map[string]int{"WAITING": 38000}},
			{Index: 3, Counts: map[string]int{}},
		},
		FailureClasses: []wire.ClassCount{
			{Class: "permanent", Count: 700, SampleTenantID: "t-00412", SampleMessage: "HTTP 409:\nconflict " + strings.Repeat("x", 100)},
			{Class: "timeout", Count: 48, SampleTenantID: "t-00007", SampleMessage: "deadline exceeded"},
		},
		Gates:   []wire.GateCount{{StageIndex: 2, Stage: "gate", Waiting: 38000}},
		Slowest: []wire.SlowTask{{TaskID: "01JSLOW", TenantID: "t-09311", StageIndex: 1, Stage: "canary-check", Since: since, RunningMs: 91234}},
	}
	tests := []struct {
		name  string
		table string
		want  []string // lines, each a regexp of a whole line
	}{
		{
			name:  "summary",
			table: render(t, summaryTable(summary)),
			want: []string{
				`STAGE\s+PENDING\s+RUNNING\s+WAITING\s+FAILED`,
				`push-config \(1/3\)\s+61200\s+20\s+-\s+-`,
				`canary-check \(2/3\)\s+-\s+30\s+-\s+748`,
				`gate \(3/3\)\s+-\s+-\s+38000\s+-`,
				`\(all stages done\)\s+-\s+-\s+-\s+-`,
				`total 100000\s+61200\s+50\s+38000\s+748`,
				`missing: 2 task\(s\) the store no longer holds .*`,
				`FAILURE CLASS\s+TASKS\s+SAMPLE TENANT\s+SAMPLE MESSAGE`,
				`permanent\s+700\s+t-00412\s+HTTP 409: conflict x+…`,
				`timeout\s+48\s+t-00007\s+deadline exceeded`,
				`list a class's tasks: executor plan tasks 01JPLAN --class C`,
				`retry them: executor plan bulk retry 01JPLAN --class C --from-checkpoint`,
				`GATE\s+WAITING\s+DECIDE`,
				`gate \(3/3\)\s+38000\s+executor plan bulk approve 01JPLAN --stage gate \(or bulk reject\)`,
				`SLOWEST RUNNING\s+TASK ID\s+STAGE\s+SINCE\s+FOR`,
				`t-09311\s+01JSLOW\s+canary-check \(2/3\)\s+2026-11-21T10:00:00Z\s+1m31s`,
			},
		},
		{
			name:  "summary of a plan without tasks",
			table: render(t, summaryTable(wire.PlanSummary{PlanID: "01JP", Statuses: map[string]int{}, Stages: []wire.StageCounts{{Index: 0, Name: "a"}, {Index: 1}}})),
			want: []string{
				`STAGE\s+PENDING\s+RUNNING\s+WAITING\s+PAUSED\s+COMPLETED\s+FAILED\s+CANCELLED\s+INTERRUPTED\s+ROLLED_BACK\s+ROLLBACK_FAILED\s+SKIPPED`,
				`a \(1/1\)(\s+-){11}`,
				`\(all stages done\)(\s+-){11}`,
				`total 0(\s+0){11}`,
			},
		},
		{
			name: "summary of a plan whose last stage is named done",
			table: render(t, summaryTable(wire.PlanSummary{PlanID: "01JP", Total: 3, Statuses: map[string]int{"RUNNING": 1, "COMPLETED": 2},
				Stages: []wire.StageCounts{{Index: 0, Name: "push"}, {Index: 1, Name: "done", Counts: map[string]int{"RUNNING": 1}},
					{Index: 2, Counts: map[string]int{"COMPLETED": 2}}}})),
			want: []string{
				`STAGE\s+RUNNING\s+COMPLETED`,
				`push \(1/2\)\s+-\s+-`,
				`done \(2/2\)\s+1\s+-`,
				`\(all stages done\)\s+-\s+2`,
				`total 3\s+1\s+2`,
			},
		},
		{
			name: "bulk result with more skipped than listed",
			table: render(t, bulkTable(wire.BulkResult{PlanID: "01JP", Action: "retry", Matched: 1003, Applied: 1000, SkippedCount: 3,
				Skipped: []wire.TaskRef{{TaskID: "01JA", TenantID: "a", Reason: "task: tenants busy: [a]"}, {TaskID: "01JB", TenantID: "b", Reason: "moved on"}}})),
			want: []string{
				`retry: matched 1003, applied 1000, skipped 3`,
				`TENANT\s+TASK ID\s+RESULT\s+REASON`,
				`a\s+01JA\s+skipped\s+task: tenants busy: \[a\]`,
				`b\s+01JB\s+skipped\s+moved on`,
				`and 1 more skipped, not listed \(the answer lists the first 2\)`,
			},
		},
		{
			name:  "bulk result without skips",
			table: render(t, bulkTable(wire.BulkResult{PlanID: "01JP", Action: "approve", Matched: 45, Applied: 45, Skipped: []wire.TaskRef{}})),
			want:  []string{`approve: matched 45, applied 45, skipped 0`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			lines := strings.Split(strings.TrimRight(tt.table, "\n"), "\n")
			var got []string
			for _, l := range lines {
				if l != "" {
					got = append(got, l)
				}
			}
			require.Len(t, got, len(tt.want), "table:\n%s", tt.table)
			for i, re := range tt.want {
				assert.Regexp(t, `^`+re+`$`, got[i], "line %d", i)
			}
		})
	}
}

func TestEventLine(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 18, 59, 54, 100e6, time.UTC)
	now := time.Date(2026, 11, 21, 19, 0, 0, 0, time.UTC)
	stages := []string{"push", "restart", "verify"}
	tests := []struct {
		name   string
		event  wire.Event
		stages []string
		want   string
	}{
		{
			name:  "plan",
			event: wire.Event{ID: "1", Kind: "plan", At: at, PlanID: "01JP", Status: "COMPLETED"},
			want:  "2026-11-21T18:59:54.100Z  plan   01JP  -  COMPLETED",
		},
		{
			name:   "stage, with the plan's stages",
			event:  wire.Event{ID: "2", Kind: "stage", At: at, PlanID: "01JP", TenantID: "t-1", Status: "RUNNING", Stage: 1, StageName: "restart", Run: 2},
			stages: stages,
			want:   "2026-11-21T18:59:54.100Z  stage  01JP  t-1  RUNNING      completed restart (2/3), run 2",
		},
		{
			name:  "stage, without them",
			event: wire.Event{ID: "2", Kind: "stage", At: at, PlanID: "01JP", TenantID: "t-1", Status: "RUNNING", Stage: 1, StageName: "restart", Run: 1},
			want:  "2026-11-21T18:59:54.100Z  stage  01JP  t-1  RUNNING      completed restart, run 1",
		},
		{
			name: "task, a failed attempt to be retried",
			event: wire.Event{ID: "3", Kind: "task", At: at, PlanID: "01JP", TenantID: "t-1", Status: "RUNNING", Stage: 2, Run: 1,
				LastAttempt: &wire.EventAttempt{StageIndex: 2, Stage: "verify", Attempt: 1, Outcome: "failed", Class: "timeout"}},
			stages: stages,
			want:   "2026-11-21T18:59:54.100Z  task   01JP  t-1  RUNNING      at verify (3/3), run 1, attempt 1 of verify failed: timeout",
		},
		{
			name:   "task, every stage done",
			event:  wire.Event{ID: "4", Kind: "task", At: at, PlanID: "01JP", TenantID: "t-1", Status: "COMPLETED", Stage: 3, Run: 1},
			stages: stages,
			want:   "2026-11-21T18:59:54.100Z  task   01JP  t-1  COMPLETED    at (all stages done), run 1",
		},
		{
			name:  "task, the plan unknown",
			event: wire.Event{ID: "4", Kind: "task", At: at, PlanID: "01JP", TenantID: "t\n1", Status: "PENDING", Stage: 0, Run: 1},
			want:  "2026-11-21T18:59:54.100Z  task   01JP  t 1  PENDING      at stage 0, run 1",
		},
		{
			name:  "gap",
			event: wire.Event{Kind: "gap"},
			want:  "2026-11-21T19:00:00.000Z  gap    events were missed (the server no longer holds them): reload the state: executor plan show 01JP",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, eventLine(tt.event, tt.stages, "01JP", now))
		})
	}
}

func TestShellWord(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"approve-prod", "approve-prod"},
		{"gate_2.eu/x:y", "gate_2.eu/x:y"},
		{"change approval", "'change approval'"},
		{"it's", `'it'\''s'`},
		{"", "''"},
		{"$(rm -rf)", "'$(rm -rf)'"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, shellWord(tt.in))
		})
	}
}
