package main_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/wire"
)

// getTask reads GET /v1/tasks/{id} from p.
func getTask(t *testing.T, p *executorProc, id string) wire.Task {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(p.URL() + "/v1/tasks/" + id)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var tk wire.Task
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&tk))
	return tk
}

// An executor is killed (kill -9) in the middle of a sleep stage. A second executor reaps the
// task to INTERRUPTED when it reads it, and its ledger, as GET /v1/tasks/{id} shows it, holds
// the attempt the kill cut: interrupted, lease_lost. Once its plan (PAUSED for the loss) is
// resumed, a retry from the checkpoint runs the stage again, completes, and the ledger keeps
// the interrupted attempt.
func TestKilledMidSleepLeavesTheInterruptedAttemptInTheLedger(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	planFile := writePlan(t, wire.PlanRequest{
		Name: "kill-mid-sleep",
		Stages: []wire.StageRequest{
			{Name: "s1", Kind: "noop"},
			// run 1 sleeps a minute (it is killed meanwhile); the retry's run 2 a moment
			{Name: "s2", Kind: "sleep", Params: map[string]any{"duration": "{{if eq .Attempt 1}}60s{{else}}50ms{{end}}"}},
			{Name: "s3", Kind: "noop"},
		},
		Tenants: []wire.TenantRequest{{ID: "k9"}},
	})

	a := startExecutor(t, "A", rs.URL())
	r := a.cli(t, "submit", "-f", planFile, "-o", "json")
	requireExit(t, 0, r)
	submitted := decode[wire.Plan](t, r.stdout)
	running := pollTenant(t, a, "k9", "RUNNING at s2", nil, func(tk wire.Task) bool {
		return tk.Status == "RUNNING" && tk.CurrentStageName == "s2"
	})
	a.kill(t)
	killedAt := time.Now()

	b := startExecutor(t, "B", rs.URL())
	pollTenant(t, b, "k9", "INTERRUPTED", nil, func(tk wire.Task) bool { return tk.Status == "INTERRUPTED" })
	interrupted := getTask(t, b, running.TaskID)
	require.Equal(t, "INTERRUPTED", interrupted.Status)
	require.NotNil(t, interrupted.LastError)
	assert.Equal(t, "lease_lost", interrupted.LastError.Class)
	require.Len(t, interrupted.Attempts, 2, "s1, then the s2 attempt the kill cut")
	assert.Equal(t, "succeeded", interrupted.Attempts[0].Outcome)
	cut := interrupted.Attempts[1]
	assert.Equal(t, "s2", cut.Stage)
	assert.Equal(t, 1, cut.Run)
	assert.Equal(t, 1, cut.Attempt)
	assert.Equal(t, "in_doubt", cut.Outcome, "B cannot know whether the killed run's call reached the target")
	assert.Equal(t, "lease_lost", cut.Class)
	assert.NotEmpty(t, cut.Error)
	assert.True(t, cut.StartedAt.Before(killedAt), "started (at the earliest) before the kill: %s", cut.StartedAt)
	assert.True(t, cut.EndedAt.After(killedAt), "ended when B learned of it: %s", cut.EndedAt)

	resumeAfterLoss(t, b, submitted.PlanID) // A's loss paused the plan
	r = b.cli(t, "retry", "--tenant", "k9", "--from-checkpoint", "-o", "json")
	requireExit(t, 0, r)
	pollTenant(t, b, "k9", "COMPLETED", nil, func(tk wire.Task) bool { return tk.Status == "COMPLETED" })
	final := getTask(t, b, running.TaskID)
	assert.Equal(t, 2, final.Attempt)
	assert.Nil(t, final.LastError)
	require.Len(t, final.Attempts, 4, "run 1's two attempts, then run 2's s2 and s3")
	assert.Equal(t, interrupted.Attempts, final.Attempts[:2], "the ledger keeps the interrupted attempt")
	for _, at := range final.Attempts[2:] {
		assert.Equal(t, 2, at.Run)
		assert.Equal(t, "succeeded", at.Outcome, "stage %s", at.Stage)
	}
	assert.Equal(t, "s2", final.Attempts[2].Stage, "run 2 resumed at s2")

	r = b.cli(t, "plan", "show", submitted.PlanID, "--watch", "-o", "json")
	requireExit(t, 0, r)
	assert.Equal(t, "COMPLETED", decode[wire.Plan](t, r.stdout).Status)
}
