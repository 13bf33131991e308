package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

// execPlan is a plan of tenants whose first stage runs release.sh (it prints the tenant's
// version as JSON) and second runs check.sh with that version as its argument.
func execPlan(dir string, tenants ...string) wire.PlanRequest {
	req := wire.PlanRequest{Name: "exec", Stages: []wire.StageRequest{
		{Name: "release", Kind: "exec", Params: map[string]any{"command": filepath.Join(dir, "release.sh")}},
		{Name: "check", Kind: "exec", Params: map[string]any{"command": filepath.Join(dir, "check.sh"), "args": []any{`{{index .Outputs "release" "version"}}`}}},
	}}
	for _, tn := range tenants {
		req.Tenants = append(req.Tenants, wire.TenantRequest{ID: tn})
	}
	return req
}

func writeScripts(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"release.sh": `echo "releasing $EXECUTOR_TENANT_ID"; echo "{\"version\":\"v-$EXECUTOR_TENANT_ID\"}"`,
		"check.sh":   `echo "{\"checked\":\"$1\"}"`,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	}
	return dir
}

// Without --exec-allow the exec kind is disabled: a plan naming it is refused, the field
// named, and nothing is created.
func TestAnExecPlanIsRefusedWhileTheKindIsDisabled(t *testing.T) {
	t.Parallel()
	c := newDGClient(t, servertest.Start(t))
	var problem wire.Problem
	resp := c.do(http.MethodPost, "/v1/plans", execPlan(writeScripts(t), "ex-1"), &problem)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, "stages[0].params.command", problem.Field)
	assert.Contains(t, problem.Errors[0].Detail, "--exec-allow")
	var list wire.PlanList
	c.do(http.MethodGet, "/v1/plans", nil, &list)
	assert.Empty(t, list.Plans)
}

// With --exec-allow naming the scripts' directory, each tenant's scripts run, the first one's
// JSON output flowing into the second one's argument.
func TestExecStagesRunPerTenantAndPassTheirOutputsOn(t *testing.T) {
	t.Parallel()
	dir := writeScripts(t)
	allow, err := stagekind.ParseExecAllow([]string{dir + "/"})
	require.NoError(t, err)
	c := newDGClient(t, servertest.With(t, server.Config{ExecAllow: allow}))

	var problem wire.Problem
	other := execPlan(dir, "ex-9")
	other.Stages[0].Params["command"] = "/bin/sh"
	resp := c.do(http.MethodPost, "/v1/plans", other, &problem)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "a command outside the allow-list")
	assert.Equal(t, "stages[0].params.command", problem.Field)

	var p wire.Plan
	resp = c.do(http.MethodPost, "/v1/plans", execPlan(dir, "ex-1", "ex-2", "ex-3"), &p)
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	c.waitCompleted(p.PlanID)
	for _, tn := range []string{"ex-1", "ex-2", "ex-3"} {
		var cp wire.Checkpoint
		require.Equal(t, http.StatusOK, c.do(http.MethodGet, "/v1/tenants/"+tn+"/checkpoint", nil, &cp).StatusCode)
		var checked struct{ Checked string }
		require.NoError(t, json.Unmarshal(cp.ContextData["check"], &checked))
		assert.Equal(t, "v-"+tn, checked.Checked)
	}
}

// Executors sharing a Redis may allow different commands (here one allows none): a plan's
// exec tasks run only on an executor that allows its command, never claimed by one that
// would fail them for it.
func TestExecTasksRunOnlyWhereTheirCommandIsAllowed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	slow := filepath.Join(dir, "slow.sh")
	require.NoError(t, os.WriteFile(slow, []byte("#!/bin/sh\nsleep 0.2\necho '{\"ok\":true}'\n"), 0o755))
	allow, err := stagekind.ParseExecAllow([]string{dir + "/"})
	require.NoError(t, err)
	rs := redistest.Start(t)
	newDGClient(t, servertest.With(t, server.Config{RedisURL: rs.URL(), Name: "no-exec", Logger: dgLogger()}))
	allowed := newDGClient(t, servertest.With(t, server.Config{RedisURL: rs.URL(), Name: "exec", ExecAllow: allow, Logger: dgLogger(), Workers: 1}))

	// One at a time on the executor that allows it, for about 2 s: the other's dispatch loop
	// lists the plan meanwhile (at least every second).
	req := wire.PlanRequest{Name: "slow", MaxConcurrency: 10, Stages: []wire.StageRequest{{Name: "s", Kind: "exec", Params: map[string]any{"command": slow}}}}
	for i := range 10 {
		req.Tenants = append(req.Tenants, wire.TenantRequest{ID: fmt.Sprintf("ea-%02d", i)})
	}
	var p wire.Plan
	require.Equal(t, http.StatusCreated, allowed.do(http.MethodPost, "/v1/plans", req, &p).StatusCode)
	allowed.waitCompleted(p.PlanID)
	for _, tk := range allowed.planTasks(p.PlanID) {
		assert.Equal(t, "COMPLETED", tk.Status)
		assert.Equal(t, "exec", tk.Executor)
	}
}
