package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/wire"
)

func gate(name string) wire.StageRequest { return approval(name, "go?") }

// submitRequest submits req and returns the plan.
func submitRequest(t *testing.T, url string, req wire.PlanRequest) wire.Plan {
	t.Helper()
	return submitJSON(t, url, writeRequest(t, "plan", req))
}

// --wait and --watch end, exit 3 and say what is needed, when nothing of the plan can
// progress without an operator although it has not ended.
func TestWaitEndsAtRest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// setup brings a plan to rest and returns the command that waits on it.
		setup func(t *testing.T, url string) (args []string, planID string)
		hints []string // "{plan}" stands for the plan's id
	}{
		{
			name: "submit --wait, tasks waiting at a gate",
			setup: func(t *testing.T, url string) ([]string, string) {
				file := writeRequest(t, "gated", wire.PlanRequest{Name: "gated", Stages: []wire.StageRequest{sleep("prep", "300ms"), gate("change-approval")},
					Tenants: tenantsOf("rg-1", "rg-2")})
				return []string{"submit", "-f", file, "--wait"}, ""
			},
			hints: []string{"2 tasks WAITING at gate change-approval (rg-1, rg-2): executor plan bulk approve {plan} --stage change-approval (or executor plan bulk reject {plan} --stage change-approval)"},
		},
		{
			name: "watch, a task interrupted and one waiting",
			setup: func(t *testing.T, url string) ([]string, string) {
				p := submitRequest(t, url, wire.PlanRequest{Stages: []wire.StageRequest{gate("first"), sleep("bake", "1m")},
					Tenants: tenantsOf("ri-1", "ri-2")})
				waitTenant(t, url, "ri-1", "WAITING")
				requireCode(t, cli.ExitOK, runCLI(t, url, "approve", "--tenant", "ri-1"))
				waitTenant(t, url, "ri-1", "RUNNING")
				requireCode(t, cli.ExitOK, runCLI(t, url, "unlock", "--tenant", "ri-1"))
				waitTenant(t, url, "ri-1", "INTERRUPTED")
				waitTenant(t, url, "ri-2", "WAITING")
				return []string{"plan", "show", p.PlanID, "--watch"}, p.PlanID
			},
			hints: []string{
				"1 task INTERRUPTED (ri-1): executor plan retry {plan} --status INTERRUPTED --from-checkpoint (or executor retry --tenant T --from-checkpoint for one)",
				"1 task WAITING at gate first (ri-2): executor approve --tenant ri-2 (or executor reject --tenant ri-2)",
			},
		},
		{
			name: "watch, the plan paused",
			setup: func(t *testing.T, url string) ([]string, string) {
				p := submitRequest(t, url, wire.PlanRequest{MaxConcurrency: 1, Stages: []wire.StageRequest{sleep("a", "200ms"), sleep("b", "200ms")},
					Tenants: tenantsOf("rp-1", "rp-2")})
				requireCode(t, cli.ExitOK, runCLI(t, url, "plan", "pause", p.PlanID))
				return []string{"plan", "show", p.PlanID, "--watch"}, p.PlanID
			},
			hints: []string{"the plan is PAUSED: executor plan resume {plan}"},
		},
		{
			name: "watch, a canary wave awaiting approval",
			setup: func(t *testing.T, url string) ([]string, string) {
				p := submitRequest(t, url, wire.PlanRequest{Canary: &wire.CanaryRequest{Tenants: 1, Then: "approve"},
					Stages: []wire.StageRequest{noop("a")}, Tenants: tenantsOf("rc-1", "rc-2", "rc-3")})
				return []string{"plan", "show", p.PlanID, "--watch"}, p.PlanID
			},
			hints: []string{"the canary wave completed and awaits approval: executor plan approve {plan} (or executor plan reject {plan})"},
		},
		{
			name: "watch, a canary waiting at a gate",
			setup: func(t *testing.T, url string) ([]string, string) {
				p := submitRequest(t, url, wire.PlanRequest{Canary: &wire.CanaryRequest{Tenants: 1, Then: "auto"},
					Stages: []wire.StageRequest{gate("check")}, Tenants: tenantsOf("rw-1", "rw-2")})
				waitTenant(t, url, "rw-1", "WAITING")
				return []string{"plan", "show", p.PlanID, "--watch"}, p.PlanID
			},
			hints: []string{
				"1 task WAITING at gate check (rw-1): executor approve --tenant rw-1 (or executor reject --tenant rw-1)",
				"the tasks past the canary wave start only once every canary task completed",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url := startServer(t).URL()
			args, planID := tt.setup(t, url)
			r := runCLI(t, url, append(args, "-o", "json")...)
			requireCode(t, cli.ExitNeedsOperator, r)
			p := decode[wire.Plan](t, r.stdout)
			assert.Contains(t, []string{"RUNNING", "PAUSED"}, p.Status)
			if planID == "" {
				planID = p.PlanID
			}
			if args[0] == "submit" { // first the notice that the plan was submitted
				require.True(t, strings.HasPrefix(r.stderr, "plan "+planID+" submitted ("), "stderr: %s", r.stderr)
			}
			doc := requireErrorDoc(t, r) // -o json: the error line and its hints as data
			assert.Equal(t, "needs-operator", doc.Error.Code)
			assert.True(t, strings.HasPrefix(doc.Error.Message, "plan "+planID+" cannot progress without an operator"), "stderr: %s", r.stderr)
			for _, h := range tt.hints {
				assert.Contains(t, doc.Error.Hints, strings.ReplaceAll(h, "{plan}", planID), "stderr: %s", r.stderr)
			}
		})
	}
}

// Ctrl-C during submit --wait names the submitted plan, says how to follow it and exits 130.
func TestSubmitWaitInterrupted(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	file := writePlan(t, "interrupted", []string{"int-1"}, sleep("bake", "1m"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr bytes.Buffer
	done := make(chan int)
	go func() {
		done <- cli.Main(ctx, []string{"--server", srv.URL(), "submit", "-f", file, "--wait"}, &stdout, &stderr)
	}()
	var planID string
	require.Eventually(t, func() bool {
		r := runCLI(t, srv.URL(), "plan", "list", "-o", "json")
		l := decode[wire.PlanList](t, r.stdout)
		if len(l.Plans) == 0 {
			return false
		}
		planID = l.Plans[0].PlanID
		return true
	}, 10*time.Second, 20*time.Millisecond)
	time.Sleep(200 * time.Millisecond) // the command waits on the plan
	cancel()
	var code int
	select {
	case code = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("submit --wait did not stop when interrupted")
	}
	assert.Equal(t, cli.ExitInterrupted, code, "stderr: %s", stderr.String())
	lines := strings.SplitAfter(stderr.String(), "\n")
	require.Len(t, lines, 3, "the submitted notice, the error line: %q", stderr.String())
	assert.True(t, strings.HasPrefix(lines[0], fmt.Sprintf("plan %s submitted (", planID)), "stderr: %s", stderr.String())
	assert.Equal(t, fmt.Sprintf("error: interrupted: plan %s submitted; still running: executor plan show %s --watch\n", planID, planID), lines[1])
	r := runCLI(t, srv.URL(), "plan", "cancel", planID)
	requireCode(t, cli.ExitOK, r)
}

// A plan submitted with startAt shows it in its table (plan show, plan list).
func TestScheduledPlanTable(t *testing.T) {
	t.Parallel()
	url := startServer(t).URL()
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	p := submitRequest(t, url, wire.PlanRequest{StartAt: &at, Stages: []wire.StageRequest{noop("a")}, Tenants: tenantsOf("sch-1")})
	require.Equal(t, "SCHEDULED", p.Status)
	for _, args := range [][]string{{"plan", "show", p.PlanID}, {"plan", "list"}} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			r := runCLI(t, url, args...)
			requireCode(t, cli.ExitOK, r)
			lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
			require.GreaterOrEqual(t, len(lines), 2, "header and a row: %q", r.stdout)
			assert.Contains(t, lines[0], "START AT")
			assert.Contains(t, lines[1], "SCHEDULED")
			assert.Contains(t, lines[1], at.Format(time.RFC3339))
		})
	}
}

// Every command's one-line help is whole and fits in 80 columns in its group's listing.
func TestHelpLinesFit(t *testing.T) {
	t.Parallel()
	url := deadURL(t)
	for _, group := range [][]string{nil, {"plan"}, {"plan", "bulk"}, {"task"}} {
		t.Run(strings.Join(append([]string{"executor"}, group...), " "), func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, url, append(group, "--help")...)
			requireCode(t, cli.ExitOK, r)
			_, list, ok := strings.Cut(r.stdout, "Available Commands:\n")
			require.True(t, ok, "help: %s", r.stdout)
			list, _, _ = strings.Cut(list, "\n\n")
			for _, line := range strings.Split(list, "\n") {
				assert.LessOrEqual(t, len([]rune(line)), 80, "cut on an 80-column terminal: %q", line)
			}
		})
	}
	r := runCLI(t, url, "--help")
	assert.Contains(t, r.stdout, "\n  approve     Approve a tenant's WAITING task at its gate; the task continues\n")
	assert.Contains(t, r.stdout, "\n  reject      Reject a tenant's WAITING task at its gate; the stage fails\n")
}

// plan tasks lists every task of a plan larger than one page (the server's at most 1,000),
// table and JSON alike.
func TestPlanTasksAllPages(t *testing.T) {
	t.Parallel()
	url := startServer(t).URL()
	ids := make([]string, 2500)
	for i := range ids {
		ids[i] = fmt.Sprintf("big-%04d", i)
	}
	p := submitRequest(t, url, wire.PlanRequest{Stages: []wire.StageRequest{noop("a")}, Tenants: tenantsOf(ids...)})

	r := runCLI(t, url, "plan", "tasks", p.PlanID, "-o", "json")
	requireCode(t, cli.ExitOK, r)
	l := decode[wire.TaskList](t, r.stdout)
	assert.Equal(t, 2500, l.Total)
	assert.Empty(t, l.NextCursor)
	got := make([]string, len(l.Tasks))
	for i, tk := range l.Tasks {
		got[i] = tk.TaskID
	}
	assert.Equal(t, p.TaskIDs, got, "every task once, in the plan's order")

	r = runCLI(t, url, "plan", "tasks", p.PlanID)
	requireCode(t, cli.ExitOK, r)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	require.Len(t, lines, 2501, "a header and a row per task")
	assert.True(t, strings.HasPrefix(lines[2500], "big-2499"))
}
