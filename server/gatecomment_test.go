package server_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// tenantTask returns GET /v1/tenants/{tenant}/task.
func tenantTask(t *testing.T, base, tenant string) wire.Task {
	t.Helper()
	resp, err := http.Get(base + "/v1/tenants/" + tenant + "/task")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var tk wire.Task
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&tk))
	return tk
}

// decide posts an approve or reject with comment for the tenant's waiting task.
func decide(t *testing.T, base, tenant, verb, comment string) {
	t.Helper()
	b, err := json.Marshal(wire.DecisionBody{Comment: comment})
	require.NoError(t, err)
	resp, err := http.Post(base+"/v1/tenants/"+tenant+"/"+verb, "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// An operator's comment on a gate is kept with the task's decision, which the API shows, and
// written to no log line, at any level: neither a rejection's failure (whose message the run
// logs) nor an approval's output carries it.
func TestGateCommentsAreShownButNotLogged(t *testing.T) {
	t.Parallel()
	const (
		rejectComment  = "CHG-reject-7f3a9c1e"
		approveComment = "CHG-approve-2b8d1e55"
	)
	logs := &servertest.Buffer{}
	srv := servertest.With(t, server.Config{
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	require.Equal(t, http.StatusCreated, postPlan(t, srv, wire.PlanRequest{
		Name:    "gate-comments",
		Stages:  []wire.StageRequest{{Name: "gate", Kind: "approval"}, {Name: "after", Kind: "noop"}},
		Tenants: []wire.TenantRequest{{ID: "gc-reject"}, {ID: "gc-approve"}},
	}))
	for _, tenant := range []string{"gc-reject", "gc-approve"} {
		require.Eventually(t, func() bool { return tenantTask(t, srv.URL(), tenant).Status == "WAITING" },
			10*time.Second, 10*time.Millisecond, "%s waits at the gate", tenant)
	}
	decide(t, srv.URL(), "gc-reject", "reject", rejectComment)
	decide(t, srv.URL(), "gc-approve", "approve", approveComment)

	var rejected, approved wire.Task
	require.Eventually(t, func() bool {
		rejected, approved = tenantTask(t, srv.URL(), "gc-reject"), tenantTask(t, srv.URL(), "gc-approve")
		return rejected.Status == "FAILED" && approved.Status == "COMPLETED"
	}, 10*time.Second, 10*time.Millisecond, "the decisions took effect")

	require.NotNil(t, rejected.Decision)
	assert.Equal(t, rejectComment, rejected.Decision.Comment, "the API shows the comment with the decision")
	require.NotNil(t, rejected.LastError)
	assert.Equal(t, "gate", rejected.LastError.Stage)
	assert.Contains(t, rejected.LastError.Message, "rejected by an operator")
	assert.NotContains(t, rejected.LastError.Message, rejectComment, "a failure message is logged: no comment in it")
	require.NotNil(t, approved.Decision)
	assert.Equal(t, approveComment, approved.Decision.Comment)

	require.Eventually(t, func() bool { return bytes.Contains([]byte(logs.String()), []byte(`"msg":"task ended"`)) },
		10*time.Second, 10*time.Millisecond, "the rejected run's end was logged")
	out := logs.String()
	require.Contains(t, out, "gc-reject", "precondition: the runs were logged")
	assert.NotContains(t, out, rejectComment)
	assert.NotContains(t, out, approveComment)
}
