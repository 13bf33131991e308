package main_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/wire"
)

// examples/rollback.yaml runs as its comments say: tenant-c fails its smoke test and rolls
// back (its push-config undone, with push-config's output), the others complete, and the plan
// ends FAILED, so `submit --wait` exits 1.
func TestTheRollbackExampleRollsTheFailedTenantBack(t *testing.T) {
	t.Parallel()
	p := startExecutor(t, "rollback-example", "")
	r := p.cli(t, "submit", "-f", filepath.Join("..", "..", "examples", "rollback.yaml"), "--wait", "-o", "json")
	requireExit(t, 1, r)
	pl := decode[wire.Plan](t, r.stdout)
	assert.Equal(t, "FAILED", pl.Status)
	assert.Equal(t, "rollback", pl.OnFailure)

	tasks := decode[wire.TaskList](t, runBinary(t, p.URL(), "plan", "tasks", pl.PlanID, "-o", "json").stdout)
	require.Len(t, tasks.Tasks, 3)
	for _, tk := range tasks.Tasks {
		if tk.TenantID != "tenant-c" {
			assert.Equal(t, "COMPLETED", tk.Status, "tenant %s", tk.TenantID)
			continue
		}
		assert.Equal(t, "ROLLED_BACK", tk.Status)
		require.NotNil(t, tk.LastError)
		assert.Equal(t, "smoke", tk.LastError.Stage, "the failure that set the rollback off")
		var undone []string
		for _, a := range tk.Attempts {
			if a.Undo {
				undone = append(undone, a.Stage)
				assert.Equal(t, "succeeded", a.Outcome, "%s: %s", a.Stage, a.Error)
			}
		}
		assert.Equal(t, []string{"push-config"}, undone, "restart has no undo: passed over")
	}
}
