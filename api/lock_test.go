package api_test

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/wire"
)

// The lock tools: GET .../lock shows the holder of a running tenant; POST .../unlock removes
// it, fences the run (its task becomes INTERRUPTED) and raises the epoch.
func TestTenantLockAndUnlock(t *testing.T) {
	t.Parallel()
	base := startServer(t)

	t.Run("a running tenant", func(t *testing.T) {
		t.Parallel()
		p := submit(t, base, wire.PlanRequest{Stages: []wire.StageRequest{sleep("bake", "10s")}, Tenants: tenants("lk-run")})
		eventuallyTenant(t, base, "lk-run", func(tk wire.Task) bool { return tk.Status == "RUNNING" })

		held := decode[wire.TenantLock](t, get(t, base+"/v1/tenants/lk-run/lock"), http.StatusOK)
		assert.Equal(t, "lk-run", held.TenantID)
		assert.True(t, held.Held)
		assert.Regexp(t, `^`+regexp.QuoteMeta(p.PlanID+":"+p.TaskIDs[0])+`@.+$`, held.Owner, "the lease names the task and the executor running it")
		assert.Equal(t, p.TaskIDs[0], held.TaskID)
		assert.Equal(t, p.PlanID, held.PlanID)

		res := postJSON(t, base+"/v1/tenants/lk-run/unlock", nil)
		u := decode[wire.TenantUnlock](t, res, http.StatusOK)
		assert.Equal(t, wire.TenantUnlock{
			TenantID: "lk-run", Released: true, PreviousOwner: held.Owner, TaskID: p.TaskIDs[0],
			Epoch: u.Epoch, Interrupted: true,
		}, u)
		assert.Greater(t, u.Epoch, held.Epoch, "the old holder is fenced")

		tk := eventuallyTenant(t, base, "lk-run", func(tk wire.Task) bool { return tk.Status == "INTERRUPTED" })
		require.NotNil(t, tk.LastError)
		assert.Equal(t, "lease_lost", tk.LastError.Class)

		free := decode[wire.TenantLock](t, get(t, base+"/v1/tenants/lk-run/lock"), http.StatusOK)
		assert.False(t, free.Held)
		assert.Empty(t, free.Owner)
		assert.Zero(t, free.TTLMs)
		assert.Equal(t, u.Epoch, free.Epoch)

		again := decode[wire.TenantUnlock](t, postJSON(t, base+"/v1/tenants/lk-run/unlock", nil), http.StatusOK)
		assert.False(t, again.Released)
		assert.Empty(t, again.PreviousOwner)
		assert.False(t, again.Interrupted, "nothing was running")
		assert.Contains(t, string(postJSON(t, base+"/v1/tenants/lk-run/unlock", nil).body), `"interrupted":false`)

		assert.Equal(t, "FAILED", waitPlan(t, base, p.PlanID).Status, "an interrupted task fails its plan until retried")
	})

	t.Run("a finished tenant holds nothing", func(t *testing.T) {
		t.Parallel()
		p := submit(t, base, wire.PlanRequest{Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("lk-done")})
		require.Equal(t, "COMPLETED", waitPlan(t, base, p.PlanID).Status)
		res := get(t, base+"/v1/tenants/lk-done/lock")
		l := decode[wire.TenantLock](t, res, http.StatusOK)
		assert.False(t, l.Held)
		assert.Equal(t, p.TaskIDs[0], l.TaskID)
		assert.NotContains(t, string(res.body), `"owner"`)
	})

	t.Run("unknown and malformed tenants", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name   string
			method string
			path   string
			status int
			field  string
		}{
			{"lock of an unknown tenant", http.MethodGet, "/v1/tenants/nobody/lock", http.StatusNotFound, ""},
			{"unlock of an unknown tenant", http.MethodPost, "/v1/tenants/nobody/unlock", http.StatusNotFound, ""},
			{"lock with a colon", http.MethodGet, "/v1/tenants/a:b/lock", http.StatusBadRequest, "tenantId"},
			{"unlock with an escaped brace", http.MethodPost, "/v1/tenants/a%7Bb/unlock", http.StatusBadRequest, "tenantId"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				requireProblem(t, do(t, tc.method, base+tc.path, nil), tc.status, tc.field)
			})
		}
	})
}
