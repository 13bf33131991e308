package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/wire"
)

// render draws a table as print does.
func render(t *testing.T, table func(io.Writer)) string {
	t.Helper()
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	table(tw)
	require.NoError(t, tw.Flush())
	return b.String()
}

func TestRolloutTables(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	stages := []wire.StageRef{{Name: "prep"}, {Name: "gate"}, {Name: "after"}}
	tests := []struct {
		name    string
		table   func(io.Writer)
		want    []string
		notWant []string
	}{
		{
			name: "waiting task",
			table: taskTable(wire.Task{
				TenantID: "t1", Status: "WAITING", Stages: stages, CurrentStage: 1, CurrentStageName: "gate",
				Wait: &wire.Wait{Stage: "gate", StageIndex: 1, Reason: "approval", Message: "ship\nit?", Since: at},
			}),
			want: []string{
				"waiting: approval at stage gate (2/3) since 2026-11-21T10:00:00Z: ship it?",
				"executor approve --tenant t1",
			},
			notWant: []string{"decision:"},
		},
		{
			name: "decided task",
			table: taskDetailTable(wire.Task{
				TenantID: "t1", Status: "FAILED", Stages: stages, CurrentStage: 1, CurrentStageName: "gate",
				Decision: &wire.Decision{Stage: "gate", StageIndex: 1, Run: 2, Comment: "no\tway", DecidedAt: at},
			}),
			want:    []string{"decision: rejected at stage gate (2/3) in run 2, 2026-11-21T10:00:00Z: no way"},
			notWant: []string{"waiting:"},
		},
		{
			name: "decided by two approvers",
			table: taskDetailTable(wire.Task{
				TenantID: "t1", Status: "COMPLETED", Stages: stages, CurrentStage: 3,
				Decision: &wire.Decision{Stage: "gate", StageIndex: 1, Run: 1, Approved: true, DecidedAt: at, By: "bob",
					Earlier: []wire.Approval{{Approved: true, By: "alice"}}},
			}),
			want: []string{"decision: approved at stage gate (2/3) in run 1, 2026-11-21T10:00:00Z by alice, bob"},
		},
		{
			name: "rejected after an approval",
			table: taskDetailTable(wire.Task{
				TenantID: "t1", Status: "FAILED", Stages: stages, CurrentStage: 1,
				Decision: &wire.Decision{Stage: "gate", StageIndex: 1, Run: 1, DecidedAt: at, By: "carol",
					Earlier: []wire.Approval{{Approved: true, By: "alice"}}},
			}),
			want: []string{"decision: rejected at stage gate (2/3) in run 1, 2026-11-21T10:00:00Z by carol (after approvals by alice)"},
		},
		{
			name: "waiting for a second approval",
			table: taskDetailTable(wire.Task{
				TenantID: "t1", Status: "WAITING", Stages: stages, CurrentStage: 1, CurrentStageName: "gate",
				Wait: &wire.Wait{Stage: "gate", StageIndex: 1, Reason: "approval", Since: at, Needed: 2,
					Approvals: []wire.Approval{{Approved: true, By: "alice"}}},
			}),
			want: []string{"approvals: 1 of 2 (alice)"},
		},
		{
			name:    "plain task",
			table:   taskTable(wire.Task{TenantID: "t1", Status: "COMPLETED", Stages: stages, CurrentStage: 3}),
			notWant: []string{"waiting:", "decision:"},
		},
		{
			name: "plan awaiting approval",
			table: planTable(wire.Plan{
				PlanID: "P1", Status: "RUNNING", StartRate: 30,
				Canary: &wire.Canary{Tenants: 2, Then: "approve", Phase: "AWAITING_APPROVAL"},
			}),
			want: []string{
				"canary: first 2 tenant(s), then approve; phase AWAITING_APPROVAL",
				"'executor plan approve P1'", "'executor plan reject P1'",
				"start rate: at most 30 task starts per minute",
			},
		},
		{
			name:    "promoted plan",
			table:   planTable(wire.Plan{PlanID: "P1", Status: "RUNNING", Canary: &wire.Canary{Tenants: 1, Then: "auto", Phase: "PROMOTED"}}),
			want:    []string{"phase PROMOTED"},
			notWant: []string{"plan approve", "start rate"},
		},
		{
			name:    "plain plan",
			table:   planTable(wire.Plan{PlanID: "P1", Status: "COMPLETED"}),
			notWant: []string{"canary", "start rate", "paused:"},
		},
		{
			name:  "plan paused for a lost executor",
			table: planTable(wire.Plan{PlanID: "P1", Status: "PAUSED", Reason: "executor exec-a lost mid-plan; interrupted tenants: t1"}),
			want: []string{"paused: executor exec-a lost mid-plan; interrupted tenants: t1",
				"'executor plan resume P1'", "'executor plan retry P1 --status INTERRUPTED --from-checkpoint'"},
		},
		{
			name:    "plan cancelled after it was paused for a lost executor",
			table:   planTable(wire.Plan{PlanID: "P1", Status: "CANCELLED", Reason: "executor exec-a lost mid-plan; interrupted tenants: t1"}),
			notWant: []string{"paused:", "plan resume"},
		},
		{
			name: "bulk retry",
			table: planRetryTable(wire.PlanRetry{
				Plan:    wire.Plan{PlanID: "P1", Status: "RUNNING"},
				Retried: []wire.TaskRef{{TaskID: "T1", TenantID: "t1"}},
				Skipped: []wire.TaskRef{{TaskID: "T2", TenantID: "t2", Reason: "the tenant has moved on"}},
			}),
			want: []string{"retried 1 task(s), skipped 1", "RESULT", "t1      T1       retried  -", "t2      T2       skipped  the tenant has moved on"},
		},
		{
			name:    "bulk retry of nothing",
			table:   planRetryTable(wire.PlanRetry{Plan: wire.Plan{PlanID: "P1"}, Retried: []wire.TaskRef{}, Skipped: []wire.TaskRef{}}),
			want:    []string{"retried 0 task(s), skipped 0"},
			notWant: []string{"RESULT"},
		},
		{
			name:  "held lock",
			table: lockTable(wire.TenantLock{TenantID: "t1", Held: true, Owner: "P1:T1", TTLMs: 1500, TaskID: "T1", PlanID: "P1", Epoch: 3}),
			want:  []string{"TENANT  HELD  OWNER  TTL   TASK ID  PLAN ID  EPOCH", "t1      true  P1:T1  1.5s  T1       P1       3"},
		},
		{
			name:  "interrupting unlock",
			table: unlockTable(wire.TenantUnlock{TenantID: "t1", Released: true, PreviousOwner: "P1:T1", TaskID: "T1", Epoch: 4, Interrupted: true}),
			want:  []string{"P1:T1", "executor retry --tenant t1 --from-checkpoint"},
		},
		{
			name:    "idle unlock",
			table:   unlockTable(wire.TenantUnlock{TenantID: "t1", TaskID: "T1", Epoch: 5}),
			want:    []string{"t1      false     -               T1       5      false"},
			notWant: []string{"executor retry"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := render(t, tt.table)
			for _, w := range tt.want {
				assert.Contains(t, out, w)
			}
			for _, w := range tt.notWant {
				assert.NotContains(t, out, w)
			}
		})
	}
}

// An error answer that is not a problem (a proxy's page) still becomes a *client.Error with
// the status and an excerpt of the body.
func TestCallErrorWithoutProblem(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, "<html>\n  bad gateway\n</html>")
	}))
	t.Cleanup(srv.Close)
	a := &invocation{server: srv.URL}
	var out wire.TenantLock
	err := a.call(context.Background(), http.MethodGet, "/v1/tenants/t/lock", nil, &out)
	var ce *client.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, http.StatusBadGateway, ce.Status)
	assert.Equal(t, http.StatusBadGateway, client.StatusCode(err))
	assert.Equal(t, "<html> bad gateway </html>", ce.Problem.Detail)
}

// A plan's failure budget reads one way whatever the plan: per ring (the current ring's count
// of tenants that may fail spelled out) and plan-wide, "none" when it has none, and nothing
// for a plan with no budget at all.
func TestPlanFailureBudgetLine(t *testing.T) {
	t.Parallel()
	rings := func(budget string, tolerates, tenants int) *wire.Rings {
		return &wire.Rings{Order: "submission", Current: 1, Waves: []wire.RingView{
			{Name: "first", Size: "1", Tenants: 1, State: "passed", Then: "auto", FailureBudget: "0"},
			{Name: "rest", Size: "rest", Tenants: tenants, State: "running", Then: "auto", FailureBudget: budget, Tolerates: tolerates},
		}}
	}
	tests := []struct {
		name string
		plan wire.Plan
		want string // "" : no line
		ring string // the current ring's line holds it
	}{
		{"no budget", wire.Plan{}, "", ""},
		{"plan-wide", wire.Plan{FailureBudget: 3}, "failure budget: plan-wide 3 failed task(s), then nothing new starts", ""},
		{"a share per ring", wire.Plan{Rings: rings("10%", 1, 10)},
			"failure budget: per ring, crossing it halts the plan (ring 1 now: 1 of 10 tenant(s) may fail, budget 10%); plan-wide: none",
			"budget 10% (1 of 10)"},
		{"rings halting at the first failure, and plan-wide", wire.Plan{FailureBudget: 5, Rings: rings("0", 0, 10)},
			"failure budget: per ring, crossing it halts the plan (ring 1 now: 0 of 10 tenant(s) may fail, budget 0); plan-wide: 5 failed task(s), then nothing new starts",
			"budget 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.plan.PlanID, tt.plan.Status = "01JP", "RUNNING"
			out := render(t, planTable(tt.plan))
			if tt.want == "" {
				assert.NotContains(t, out, "failure budget")
				return
			}
			assert.Contains(t, out, "\n"+tt.want+"\n")
			if tt.ring != "" {
				assert.Regexp(t, `> 1 rest .* `+regexp.QuoteMeta(tt.ring)+`\n`, out)
			}
		})
	}
}
