package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
