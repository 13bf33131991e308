package main_test

// The acceptance of named identities, the audit trail and approval rules (issue 36), with
// real processes: two executors sharing a private redis-server, named tokens, the CLI.

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/wire"
)

const (
	aliceSecret = "alice-e2e-0123456789abcdef"
	bobSecret   = "bob-e2e-0123456789abcdef"
)

// tokensFile writes alice's and bob's operate tokens to a --tokens-file.
func tokensFile(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(f, []byte("operate:alice:"+aliceSecret+"\noperate:bob:"+bobSecret+"\n"), 0o600))
	return f
}

// auditOf reads every record of plan planID's audit trail through p, as who.
func auditOf(t *testing.T, p *executorProc, planID, secret string) []wire.AuditRecord {
	t.Helper()
	q := url.Values{"plan": {planID}, "limit": {"2"}}
	var out []wire.AuditRecord
	for pages := 0; pages < 20; pages++ {
		req, err := http.NewRequest(http.MethodGet, p.URL()+"/v1/audit?"+q.Encode(), nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+secret)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var page wire.AuditPage
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.NoError(t, json.NewDecoder(res.Body).Decode(&page))
		res.Body.Close()
		out = append(out, page.Records...)
		if page.NextCursor == "" {
			return out
		}
		q.Set("cursor", page.NextCursor)
	}
	require.FailNow(t, "the audit trail's pages never end")
	return nil
}

// Bob submits a plan whose gate requires notSubmitter; his own approval is refused (403,
// exit 1, the clause named) and alice's passes, each through another executor; the audit
// trail lists each action with its actor and the executor that took it, alike through
// either executor.
func TestNamedApproversAndTheAuditTrailAcrossExecutors(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	tokens := tokensFile(t)
	a := startExecutor(t, "A", rs.URL(), "--name", "exec-a", "--tokens-file", tokens)
	b := startExecutor(t, "B", rs.URL(), "--name", "exec-b", "--tokens-file", tokens)
	bob, alice := []string{"EXECUTOR_TOKEN=" + bobSecret}, []string{"EXECUTOR_TOKEN=" + aliceSecret}

	planFile := writePlan(t, wire.PlanRequest{Name: "four-eyes", Stages: []wire.StageRequest{
		{Name: "ship", Kind: "approval", Params: map[string]any{"message": "ship it?"}, Approvers: &wire.Approvers{NotSubmitter: true}},
	}, Tenants: []wire.TenantRequest{{ID: "fe-1"}, {ID: "fe-2"}}})
	r := runWithEnv(t, a.URL(), bob, "submit", "-f", planFile, "-o", "json")
	requireExit(t, 0, r)
	p := decode[wire.Plan](t, r.stdout)
	assert.Equal(t, "bob", p.SubmittedBy)
	for _, tenant := range []string{"fe-1", "fe-2"} {
		require.Eventually(t, func() bool {
			r := runWithEnv(t, b.URL(), bob, "status", "--tenant", tenant, "-o", "json")
			return r.code == 0 && decode[wire.Task](t, r.stdout).Status == "WAITING"
		}, 20*time.Second, 50*time.Millisecond, "%s never waited at its gate", tenant)
	}

	r = runWithEnv(t, b.URL(), bob, "approve", "--tenant", "fe-1", "--comment", "mine")
	requireExit(t, 1, r)
	assert.Contains(t, r.stderr, "403")
	assert.Contains(t, r.stderr, "approvers.notSubmitter")
	requireExit(t, 0, runWithEnv(t, b.URL(), alice, "approve", "--tenant", "fe-1", "--comment", "lgtm"))
	requireExit(t, 0, runWithEnv(t, a.URL(), alice, "approve", "--tenant", "fe-2"))
	require.Eventually(t, func() bool {
		r := runWithEnv(t, b.URL(), bob, "plan", "show", p.PlanID, "-o", "json")
		return r.code == 0 && decode[wire.Plan](t, r.stdout).Status == "COMPLETED"
	}, 20*time.Second, 50*time.Millisecond, "the plan never completed")
	r = runWithEnv(t, a.URL(), bob, "status", "--tenant", "fe-1", "-o", "json")
	requireExit(t, 0, r)
	tk := decode[wire.Task](t, r.stdout)
	require.NotNil(t, tk.Decision)
	assert.Equal(t, "alice", tk.Decision.By)

	type seen struct{ Action, Tenant, Actor, Executor, Result, Code string }
	want := []seen{
		{"approve", "fe-2", "alice", "exec-a", "applied", ""},
		{"approve", "fe-1", "alice", "exec-b", "applied", ""},
		{"approve", "fe-1", "bob", "exec-b", "refused", "forbidden"},
		{"submit", "", "bob", "exec-a", "applied", ""},
	}
	for _, through := range []*executorProc{a, b} {
		var got []seen
		for _, rec := range auditOf(t, through, p.PlanID, aliceSecret) {
			got = append(got, seen{rec.Action, rec.Tenant, rec.Actor, rec.Executor, rec.Result, rec.Code})
			assert.Equal(t, "operate", rec.Role)
			assert.NotEmpty(t, rec.RequestID)
		}
		assert.Equal(t, want, got, "through %s", through.name)
	}
}
