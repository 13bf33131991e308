package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

func TestTenantConflictThenCancelPlan(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	first := submit(t, base, wire.PlanRequest{
		Name: "long", Stages: []wire.StageRequest{sleep("bake", "10s"), noop("after")}, Tenants: tenants("busy"),
	})

	// The task and its lease are read at once: the first answer that says RUNNING may have read
	// the lease an instant before the runner took it.
	running := eventuallyTenant(t, base, "busy", func(tk wire.Task) bool {
		return tk.Status == "RUNNING" && tk.Lease != nil && tk.Lease.Held
	})
	assert.Regexp(t, `^`+regexp.QuoteMeta(first.PlanID+":"+first.TaskIDs[0])+`@.+$`, running.Lease.Owner, "the lease names the task and the executor running it")
	assert.Nil(t, running.Checkpoint, "no stage completed yet")
	requireProblem(t, get(t, base+"/v1/tenants/busy/checkpoint"), http.StatusNotFound, "")

	second := wire.PlanRequest{Name: "second", Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("free", "busy")}
	p := requireProblem(t, postJSON(t, base+"/v1/plans", second), http.StatusConflict, "")
	assert.Equal(t, wire.ProblemTenantConflict, p.Type)
	assert.Equal(t, []string{"busy"}, p.Tenants)

	preview := decode[wire.DryRun](t, postJSON(t, base+"/v1/plans?dryRun=true", second), http.StatusOK)
	assert.Equal(t, []string{"busy"}, preview.Conflicts)

	assert.Equal(t, []string{first.PlanID}, planIDs(listPlans(t, base, "").Plans), "the refused plan was not created")
	requireProblem(t, get(t, base+"/v1/tenants/free/task"), http.StatusNotFound, "")

	cancelled := decode[wire.Plan](t, postJSON(t, base+"/v1/plans/"+first.PlanID+"/cancel", nil), http.StatusOK)
	assert.Equal(t, "CANCELLED", cancelled.Status)
	assert.NotNil(t, cancelled.FinishedAt)
	tk := eventuallyTenant(t, base, "busy", func(tk wire.Task) bool { return tk.Status == "CANCELLED" })
	require.NotNil(t, tk.LastError)
	assert.Equal(t, "cancelled", tk.LastError.Class)
	assert.Equal(t, "CANCELLED", waitPlan(t, base, first.PlanID).Status)

	again := requireProblem(t, postJSON(t, base+"/v1/plans/"+first.PlanID+"/cancel", nil), http.StatusConflict, "")
	assert.Equal(t, wire.ProblemInvalidTransition, again.Type)

	created := submit(t, base, second)
	assert.Equal(t, "COMPLETED", waitPlan(t, base, created.PlanID).Status)
}

func TestPauseResumePlan(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	p := submit(t, base, wire.PlanRequest{
		Name: "pausable", MaxConcurrency: 1,
		Stages:  []wire.StageRequest{sleep("bake", "1s"), noop("after")},
		Tenants: tenants("pp-1", "pp-2", "pp-3"),
	})
	require.Equal(t, "RUNNING", p.Status)
	// Pause while pp-1 runs its first stage (a task not started yet would simply stay queued).
	// RUNNING shows just before the run passes the boundary ahead of stage 0, where a pause
	// would be honoured at once: give it a moment to be inside the 1 s bake.
	eventuallyTenant(t, base, "pp-1", func(tk wire.Task) bool { return tk.Status == "RUNNING" })
	time.Sleep(200 * time.Millisecond)

	paused := decode[wire.Plan](t, postJSON(t, base+"/v1/plans/"+p.PlanID+"/pause", nil), http.StatusOK)
	assert.Equal(t, "PAUSED", paused.Status)
	// The running task stops at its next stage boundary; queued tasks do not start.
	first := eventuallyTenant(t, base, "pp-1", func(tk wire.Task) bool { return tk.Status == "PAUSED" })
	assert.Equal(t, 1, first.CurrentStage)
	assert.Equal(t, "after", first.CurrentStageName)
	for _, tk := range planTasks(t, base, p.PlanID, "")[1:] {
		assert.Equal(t, "PENDING", tk.Status, tk.TenantID)
	}
	still := decode[wire.Plan](t, get(t, base+"/v1/plans/"+p.PlanID+"?wait=100ms"), http.StatusOK)
	assert.Equal(t, "PAUSED", still.Status, "a paused plan does not end")
	assert.Equal(t, 1, still.Progress["PAUSED"])

	requireProblem(t, postJSON(t, base+"/v1/plans/"+p.PlanID+"/pause", nil), http.StatusConflict, "")

	resumed := decode[wire.Plan](t, postJSON(t, base+"/v1/plans/"+p.PlanID+"/resume", nil), http.StatusOK)
	assert.Equal(t, "RUNNING", resumed.Status)
	done := waitPlan(t, base, p.PlanID)
	assert.Equal(t, "COMPLETED", done.Status)
	assert.Equal(t, 3, done.Progress["COMPLETED"])

	requireProblem(t, postJSON(t, base+"/v1/plans/"+p.PlanID+"/resume", nil), http.StatusConflict, "")
}

func TestPauseResumeCancelTenant(t *testing.T) {
	t.Parallel()
	base := startServer(t)

	t.Run("pause and resume", func(t *testing.T) {
		t.Parallel()
		p := submit(t, base, wire.PlanRequest{
			Stages: []wire.StageRequest{sleep("bake", "1s"), noop("push"), noop("check")}, Tenants: tenants("solo"),
		})
		eventuallyTenant(t, base, "solo", func(tk wire.Task) bool { return tk.Status == "RUNNING" })
		time.Sleep(200 * time.Millisecond) // inside the bake, past the boundary ahead of stage 0
		asked := decode[wire.Task](t, postJSON(t, base+"/v1/tenants/solo/pause", nil), http.StatusOK)
		assert.True(t, asked.PauseRequested)
		assert.NotNil(t, asked.Lease)

		paused := eventuallyTenant(t, base, "solo", func(tk wire.Task) bool { return tk.Status == "PAUSED" })
		assert.Equal(t, 1, paused.CurrentStage)
		assert.False(t, paused.PauseRequested)
		require.NotNil(t, paused.Checkpoint)
		assert.Equal(t, 0, paused.Checkpoint.LastCompletedStageIndex)
		assert.Equal(t, "RUNNING", decode[wire.Plan](t, get(t, base+"/v1/plans/"+p.PlanID+"?wait=100ms"), http.StatusOK).Status)

		resumed := decode[wire.Task](t, postJSON(t, base+"/v1/tenants/solo/resume", nil), http.StatusOK)
		assert.Contains(t, []string{"PENDING", "RUNNING", "COMPLETED"}, resumed.Status)
		assert.False(t, resumed.PauseRequested)
		assert.Equal(t, "COMPLETED", waitPlan(t, base, p.PlanID).Status)
		tk := tenantTask(t, base, "solo")
		assert.Equal(t, "COMPLETED", tk.Status)
		assert.Equal(t, 1, tk.Attempt, "a resume is not a retry")

		requireProblem(t, postJSON(t, base+"/v1/tenants/solo/pause", nil), http.StatusConflict, "")
	})

	t.Run("cancel", func(t *testing.T) {
		t.Parallel()
		p := submit(t, base, wire.PlanRequest{Stages: []wire.StageRequest{sleep("bake", "10s")}, Tenants: tenants("doomed")})
		eventuallyTenant(t, base, "doomed", func(tk wire.Task) bool { return tk.Status == "RUNNING" })
		tk := decode[wire.Task](t, postJSON(t, base+"/v1/tenants/doomed/cancel", nil), http.StatusOK)
		assert.Equal(t, "CANCELLED", tk.Status)
		require.NotNil(t, tk.LastError)
		assert.Equal(t, "cancelled", tk.LastError.Class)
		require.NotNil(t, tk.Lease)
		assert.Equal(t, "CANCELLED", waitPlan(t, base, p.PlanID).Status, "its only task was cancelled")
		requireProblem(t, postJSON(t, base+"/v1/tenants/doomed/cancel", nil), http.StatusConflict, "")
	})
}

// flaky is a custom stage kind: a stage whose params say fail: "yes" fails permanently for
// a tenant while the tenant is marked broken. It counts runs per tenant and stage.
type flaky struct {
	mu     sync.Mutex
	broken map[string]bool
	runs   map[string]int // "tenant/stage"
}

func (f *flaky) Run(_ context.Context, req stage.Request) (json.RawMessage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runs[req.TenantID+"/"+req.Stage]++
	if req.Params["fail"] == "yes" && f.broken[req.TenantID] {
		return nil, stage.Permanent(errors.New("tenant is broken"))
	}
	return json.RawMessage(`{"ok":true}`), nil
}

func (f *flaky) setBroken(tenant string, b bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.broken[tenant] = b
}

func (f *flaky) count(tenant, stageName string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.runs[tenant+"/"+stageName]
}

func TestRetryTenant(t *testing.T) {
	t.Parallel()
	kind := &flaky{broken: map[string]bool{}, runs: map[string]int{}}
	base := startServer(t, func(r *stagekind.Registry) {
		require.NoError(t, r.Register("flaky", stage.HandlerFunc(kind.Run)))
	})
	stages := []wire.StageRequest{
		{Name: "prep", Kind: "flaky"},
		{Name: "deploy", Kind: "flaky", Params: map[string]any{"fail": "yes"}},
		noop("verify"),
	}

	tests := []struct {
		name        string
		tenant      string
		body        any // nil: no body
		wantPrepRun int // how often stage 0 ran in the end
		wantFrom    int // the first stage index of run 2
	}{
		{"from checkpoint", "r-cp", map[string]any{"fromCheckpoint": true}, 1, 1},
		{"from the start", "r-fresh", map[string]any{"fromCheckpoint": false}, 2, 0},
		{"empty body resumes from checkpoint", "r-default", nil, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			kind.setBroken(tc.tenant, true)
			p := submit(t, base, wire.PlanRequest{Stages: stages, Tenants: tenants(tc.tenant)})
			require.Equal(t, "FAILED", waitPlan(t, base, p.PlanID).Status)
			failed := tenantTask(t, base, tc.tenant)
			require.Equal(t, "FAILED", failed.Status)
			assert.Equal(t, 1, failed.Attempt)
			require.NotNil(t, failed.LastError)
			assert.Equal(t, "permanent", failed.LastError.Class)
			assert.Equal(t, "deploy", failed.LastError.Stage)
			require.NotNil(t, failed.Checkpoint)
			assert.Equal(t, 0, failed.Checkpoint.LastCompletedStageIndex)

			kind.setBroken(tc.tenant, false)
			retried := decode[wire.Task](t, postJSON(t, base+"/v1/tenants/"+tc.tenant+"/retry", tc.body), http.StatusOK)
			assert.Equal(t, failed.TaskID, retried.TaskID)
			assert.Equal(t, 2, retried.Attempt)
			assert.Nil(t, retried.LastError)

			assert.Equal(t, "COMPLETED", waitPlan(t, base, p.PlanID).Status, "the plan reopens and completes")
			done := tenantTask(t, base, tc.tenant)
			assert.Equal(t, "COMPLETED", done.Status)
			assert.Equal(t, 2, done.Attempt)
			require.NotNil(t, done.Checkpoint)
			assert.Equal(t, 2, done.Checkpoint.LastCompletedStageIndex)
			assert.Equal(t, tc.wantPrepRun, kind.count(tc.tenant, "prep"))
			assert.Equal(t, 2, kind.count(tc.tenant, "deploy"))

			var run2 []int
			for _, a := range done.Attempts {
				if a.Run == 2 {
					run2 = append(run2, a.StageIndex)
				}
			}
			require.NotEmpty(t, run2)
			assert.Equal(t, tc.wantFrom, run2[0], "the ledger shows where run 2 started")

			requireProblem(t, postJSON(t, base+"/v1/tenants/"+tc.tenant+"/retry", tc.body), http.StatusConflict, "")
		})
	}

	t.Run("bad bodies", func(t *testing.T) {
		t.Parallel()
		submit(t, base, wire.PlanRequest{Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("r-bad")})
		cases := []struct {
			name  string
			body  string
			field string
		}{
			{"unknown field", `{"fromCheckpont": true}`, "fromCheckpont"},
			{"wrong type", `{"fromCheckpoint": "yes"}`, "fromCheckpoint"},
			{"malformed", `{"fromCheckpoint":`, "body"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				res := do(t, http.MethodPost, base+"/v1/tenants/r-bad/retry", []byte(tc.body), "Content-Type", "application/json")
				requireProblem(t, res, http.StatusBadRequest, tc.field)
			})
		}
	})
}
