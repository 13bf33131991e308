package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/wire"
)

func TestTaskCells(t *testing.T) {
	t.Parallel()
	stages := []wire.StageRef{{Name: "s1"}, {Name: "s2"}, {Name: "s3"}}
	tests := []struct {
		name                      string
		task                      wire.Task
		wantStage, wantCheckpoint string
		wantLease, wantError      string
	}{
		{
			name:      "fresh",
			task:      wire.Task{Stages: stages, CurrentStageName: "s1"},
			wantStage: "s1 (1/3)",
		},
		{
			name: "failed at s3 after a checkpoint, lease released",
			task: wire.Task{
				Stages: stages, CurrentStage: 2, CurrentStageName: "s3",
				LastError:  &wire.Failure{Class: "permanent", Message: "400\tbad\nrequest"},
				Checkpoint: &wire.CheckpointSummary{LastCompletedStageIndex: 1, CompletedStages: []string{"s1", "s2"}},
				Lease:      &wire.Lease{Held: false},
			},
			wantStage: "s3 (3/3)", wantCheckpoint: "1 (s2)", wantError: "permanent: 400 bad request",
		},
		{
			name: "running with a lease",
			task: wire.Task{
				Stages: stages, CurrentStage: 1, CurrentStageName: "s2",
				Lease: &wire.Lease{Held: true, Owner: "plan:task"},
			},
			wantStage: "s2 (2/3)", wantLease: "plan:task",
		},
		{
			name:      "every stage ran",
			task:      wire.Task{Stages: stages, CurrentStage: 3},
			wantStage: "(all stages done)",
		},
		{
			name:      "long error is cut",
			task:      wire.Task{Stages: stages, CurrentStage: 3, LastError: &wire.Failure{Class: "retryable", Message: strings.Repeat("x", 200)}},
			wantStage: "(all stages done)", wantError: "retryable: " + strings.Repeat("x", maxCell-len("retryable: ")-1) + "…",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.wantStage, taskStage(tt.task))
			assert.Equal(t, tt.wantCheckpoint, taskCheckpoint(tt.task))
			assert.Equal(t, tt.wantLease, taskLease(tt.task))
			assert.Equal(t, tt.wantError, taskError(tt.task))
		})
	}
}

func TestTableRowsStayOnOneLine(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	a := &invocation{streams: streams{stdout: &out}, output: OutputTable}
	task := wire.Task{TenantID: "t1", Status: "FAILED", LastError: &wire.Failure{Class: "permanent", Message: "line1\nline2\r\tend"}}
	require.NoError(t, a.print(task, taskTable(task)))
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	assert.Len(t, lines, 2, "header and one row: %q", out.String())
}

func TestTaskListTableColumns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		tasks        []wire.Task
		wantLeaseCol bool
	}{
		{name: "listing without lease data", tasks: []wire.Task{{TenantID: "a"}}, wantLeaseCol: false},
		{name: "tasks with lease data", tasks: []wire.Task{{TenantID: "a", Lease: &wire.Lease{}}}, wantLeaseCol: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			a := &invocation{streams: streams{stdout: &out}, output: OutputTable}
			l := wire.TaskList{Tasks: tt.tasks}
			require.NoError(t, a.print(l, taskListTable(l)))
			header := strings.SplitN(out.String(), "\n", 2)[0]
			assert.Equal(t, tt.wantLeaseCol, strings.Contains(header, "LEASE"))
			assert.Contains(t, header, "LAST ERROR")
		})
	}
}
