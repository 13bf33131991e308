package cli

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/executor-dev/executor/wire"
)

func TestAttemptOutputs(t *testing.T) {
	t.Parallel()
	var long []string
	for i := 1; i <= 25; i++ {
		long = append(long, fmt.Sprintf("err line %d", i))
	}
	task := wire.Task{
		TenantID: "t1", Status: "FAILED", Stages: []wire.StageRef{{Name: "migrate"}, {Name: "verify"}, {Name: "notify"}},
		CurrentStage: 1, CurrentStageName: "verify",
		Attempts: []wire.Attempt{
			{StageIndex: 0, Stage: "migrate", Run: 1, Attempt: 1, Outcome: "failed", Stdout: "first try\n", Stderr: "lock held\n"},
			{StageIndex: 0, Stage: "migrate", Run: 1, Attempt: 2, Outcome: "succeeded", Stdout: "migrated\tall\n"},
			{StageIndex: 1, Stage: "verify", Run: 1, Attempt: 1, Outcome: "failed", Stderr: strings.Join(long, "\n") + "\n"},
			{StageIndex: 1, Stage: "verify", Run: 1, Attempt: 2, Outcome: "interrupted"}, // printed nothing kept
		},
	}
	tests := []struct {
		name    string
		table   func(io.Writer)
		want    []string
		notWant []string
	}{
		{
			name:  "status: the last attempt of each stage that printed, 20 lines of each stream",
			table: taskStatusTable(task),
			want: []string{
				"\noutput of stage migrate (1/3), run 1, attempt 2 (succeeded):\n  stdout:\n    migrated all\n",
				"\noutput of stage verify (2/3), run 1, attempt 1 (failed):\n  stderr:\n    … 5 earlier line(s)",
				"    err line 6\n", "    err line 25\n",
			},
			notWant: []string{"first try", "lock held", "err line 5\n", "attempt 2 (interrupted)", "stdout:\n    err"},
		},
		{
			name:  "task show: every attempt that printed, whole",
			table: taskDetailTable(task),
			want: []string{
				"output of stage migrate (1/3), run 1, attempt 1 (failed):\n  stdout:\n    first try\n  stderr:\n    lock held\n",
				"output of stage migrate (1/3), run 1, attempt 2 (succeeded):",
				"    err line 1\n", "    err line 25\n",
			},
			notWant: []string{"earlier line", "attempt 2 (interrupted)"},
		},
		{
			name:    "nothing printed: no output section",
			table:   taskStatusTable(wire.Task{TenantID: "t1", Status: "COMPLETED", Attempts: []wire.Attempt{{Stage: "s", Outcome: "succeeded"}}}),
			notWant: []string{"output of", "stdout:", "stderr:"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := render(t, tt.table)
			for _, w := range tt.want {
				assert.Contains(t, out, w)
			}
			for _, nw := range tt.notWant {
				assert.NotContains(t, out, nw)
			}
		})
	}
}
