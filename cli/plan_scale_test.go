package cli_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

// byTenant is a stage kind that, while broken, fails the tenants named perm-* permanently and
// those named flap-* with a retryable error (class retryable once the stage's one attempt is
// spent), and lets every other tenant through. It counts its runs per tenant and stage.
type byTenant struct {
	broken atomic.Bool
	mu     sync.Mutex
	runs   map[string]int
}

func newByTenant() *byTenant {
	k := &byTenant{runs: map[string]int{}}
	k.broken.Store(true)
	return k
}

func (k *byTenant) Run(_ context.Context, req stage.Request) (json.RawMessage, error) {
	k.mu.Lock()
	k.runs[req.TenantID+"/"+req.Stage]++
	k.mu.Unlock()
	switch {
	case !k.broken.Load():
	case strings.HasPrefix(req.TenantID, "perm-"):
		return nil, stage.Permanent(errors.New("refused: 409 conflict"))
	case strings.HasPrefix(req.TenantID, "flap-"):
		return nil, stage.Retryable(errors.New("upstream: 503"))
	}
	return json.RawMessage(`{"ok":true}`), nil
}

func (k *byTenant) count(key string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.runs[key]
}

// mixedTenants are the tenants of mixedPlan in submission order: ok-* reach the gate and wait
// there, perm-* fail permanently at "fragile", flap-1 fails there with class retryable.
var mixedTenants = []string{"ok-1", "perm-1", "ok-2", "flap-1", "ok-3", "perm-2"}

// mixedPlan starts a server with the byTenant kind, submits prep → fragile (byTenant) → gate
// (approval) → after for mixedTenants, and waits until the plan is at rest: ok-* WAITING at
// the gate, perm-* and flap-1 FAILED at fragile.
func mixedPlan(t *testing.T) (url string, p wire.Plan, kind *byTenant) {
	t.Helper()
	kind = newByTenant()
	srv := servertest.Start(t, func(k *stagekind.Registry) { require.NoError(t, k.Register("bytenant", kind)) })
	url = srv.URL()
	p = submitRequest(t, url, wire.PlanRequest{
		Name: "mixed",
		Stages: []wire.StageRequest{noop("prep"),
			{Name: "fragile", Kind: "bytenant", Retry: &wire.RetryRequest{MaxAttempts: 1}},
			approval("gate", "go?"), noop("after")},
		Tenants: tenantsOf(mixedTenants...),
	})
	r := runCLI(t, url, "plan", "show", p.PlanID, "--watch", "-o", "json")
	requireCode(t, cli.ExitNeedsOperator, r)
	return url, p, kind
}

// tenantsIn returns the tenant ids of a `plan tasks -o json` listing, in its order, and
// checks that its total counts them.
func tenantsIn(t *testing.T, stdout string) []string {
	t.Helper()
	l := decode[wire.TaskList](t, stdout)
	out := make([]string, len(l.Tasks))
	for i, tk := range l.Tasks {
		out[i] = tk.TenantID
	}
	assert.Equal(t, len(out), l.Total, "total counts the listed tasks")
	return out
}

func TestPlanTasksFilters(t *testing.T) {
	t.Parallel()
	url, p, _ := mixedPlan(t)
	tests := []struct {
		name string
		args []string
		want []string // tenants, in the listing's order
	}{
		{name: "no filter", want: mixedTenants},
		{name: "one status", args: []string{"--status", "waiting"}, want: []string{"ok-1", "ok-2", "ok-3"}},
		{name: "a comma list of statuses", args: []string{"--status", "FAILED,WAITING"}, want: mixedTenants},
		{name: "repeated statuses", args: []string{"--status", "COMPLETED", "--status", "FAILED"}, want: []string{"perm-1", "flap-1", "perm-2"}},
		{name: "stage by name", args: []string{"--stage", "gate"}, want: []string{"ok-1", "ok-2", "ok-3"}},
		{name: "stage by index", args: []string{"--stage", "1"}, want: []string{"perm-1", "flap-1", "perm-2"}},
		{name: "stage with no task", args: []string{"--stage", "after"}, want: []string{}},
		{name: "every stage done", args: []string{"--stage", "4"}, want: []string{}},
		{name: "class", args: []string{"--class", "permanent"}, want: []string{"perm-1", "perm-2"}},
		{name: "another class", args: []string{"--class", "retryable"}, want: []string{"flap-1"}},
		{name: "tenant prefix", args: []string{"--tenant", "ok-"}, want: []string{"ok-1", "ok-2", "ok-3"}},
		{name: "every filter", args: []string{"--status", "FAILED", "--stage", "fragile", "--class", "permanent", "--tenant", "perm-2"}, want: []string{"perm-2"}},
		{name: "filters matching nothing", args: []string{"--status", "WAITING", "--class", "permanent"}, want: []string{}},
		{name: "sorted by tenant", args: []string{"--sort", "tenant"}, want: []string{"flap-1", "ok-1", "ok-2", "ok-3", "perm-1", "perm-2"}},
		{name: "sorted by tenant, last first", args: []string{"--sort=-tenant"}, want: []string{"perm-2", "perm-1", "ok-3", "ok-2", "ok-1", "flap-1"}},
		{name: "last first, two a page", args: []string{"--sort=-order", "--page-size", "2"}, want: []string{"perm-2", "ok-3", "flap-1", "ok-2", "perm-1", "ok-1"}},
		{name: "filtered, one a page", args: []string{"--status", "FAILED", "--page-size", "1"}, want: []string{"perm-1", "flap-1", "perm-2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, url, append([]string{"plan", "tasks", p.PlanID, "-o", "json"}, tt.args...)...)
			requireCode(t, cli.ExitOK, r)
			assert.Equal(t, tt.want, tenantsIn(t, r.stdout))

			r = runCLI(t, url, append([]string{"plan", "tasks", p.PlanID}, tt.args...)...)
			requireCode(t, cli.ExitOK, r)
			lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
			require.Len(t, lines, 1+len(tt.want), "a header and a row per task: %q", r.stdout)
			assert.Regexp(t, `^TENANT\s+TASK ID\s+STATUS\s+ATTEMPT\s+STAGE\s+LAST ERROR$`, lines[0])
			for i, tenant := range tt.want {
				assert.Equal(t, tenant, strings.Fields(lines[i+1])[0], "row %d", i)
			}
		})
	}
	t.Run("a failed task's row", func(t *testing.T) {
		t.Parallel()
		r := runCLI(t, url, "plan", "tasks", p.PlanID, "--tenant", "perm-1")
		requireCode(t, cli.ExitOK, r)
		assert.Regexp(t, `(?m)^perm-1\s+\S+\s+FAILED\s+1\s+fragile \(2/4\)\s+permanent: .*refused: 409 conflict`, r.stdout)
	})
	t.Run("an unknown stage is the server's 400", func(t *testing.T) {
		t.Parallel()
		requireRemoteError(t, runCLI(t, url, "plan", "tasks", p.PlanID, "--stage", "nosuch"), "(field: stage)")
	})
}

// plan tasks pages through more tasks than a page holds: every task once, in order, whatever
// the filter and the order.
func TestPlanTasksPaging(t *testing.T) {
	t.Parallel()
	url := startServer(t).URL()
	ids := make([]string, 250)
	for i := range ids {
		ids[i] = fmt.Sprintf("pg-%03d", i)
	}
	p := submitRequest(t, url, wire.PlanRequest{Stages: []wire.StageRequest{noop("a")}, Tenants: tenantsOf(ids...)})
	requireCode(t, cli.ExitOK, runCLI(t, url, "plan", "show", p.PlanID, "--watch"))
	reversed := slices.Clone(ids)
	slices.Reverse(reversed)

	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "every task, 100 a page", args: []string{"--page-size", "100"}, want: ids},
		{name: "every task, one page", want: ids},
		{name: "a status, 100 a page", args: []string{"--status", "COMPLETED", "--page-size", "100"}, want: ids},
		{name: "last first, 100 a page", args: []string{"--sort=-order", "--page-size", "100"}, want: reversed},
		{name: "by tenant, last first, 7 a page", args: []string{"--sort=-tenant", "--page-size", "7"}, want: reversed},
		{name: "a tenant prefix, 30 a page", args: []string{"--tenant", "pg-1", "--page-size", "30"}, want: ids[100:200]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, url, append([]string{"plan", "tasks", p.PlanID, "-o", "json"}, tt.args...)...)
			requireCode(t, cli.ExitOK, r)
			l := decode[wire.TaskList](t, r.stdout)
			assert.Equal(t, len(tt.want), l.Total)
			assert.Empty(t, l.NextCursor)
			got := make([]string, len(l.Tasks))
			seen := map[string]bool{}
			for i, tk := range l.Tasks {
				got[i] = tk.TenantID
				assert.False(t, seen[tk.TaskID], "task %s listed twice", tk.TaskID)
				seen[tk.TaskID] = true
			}
			assert.Equal(t, tt.want, got, "every matching task once, in order")

			r = runCLI(t, url, append([]string{"plan", "tasks", p.PlanID}, tt.args...)...)
			requireCode(t, cli.ExitOK, r)
			lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
			require.Len(t, lines, 1+len(tt.want), "a header and a row per task, whatever the pages")
			assert.Equal(t, 1, strings.Count(r.stdout, "TENANT"), "one header")
			for i, tenant := range tt.want {
				require.True(t, strings.HasPrefix(lines[i+1], tenant+" "), "row %d: %q", i, lines[i+1])
			}
		})
	}
}

// plan show prints the plan, then its summary: the stage × status matrix, the failure
// classes, the gates; the counts are the summary's.
func TestPlanShowSummary(t *testing.T) {
	t.Parallel()
	url, p, _ := mixedPlan(t)

	r := runCLI(t, url, "plan", "summary", p.PlanID, "-o", "json")
	requireCode(t, cli.ExitOK, r)
	s := decode[wire.PlanSummary](t, r.stdout)
	require.Equal(t, p.PlanID, s.PlanID)
	require.Equal(t, 6, s.Total)
	require.Equal(t, 3, s.Statuses["WAITING"])
	require.Equal(t, 3, s.Statuses["FAILED"])
	require.Len(t, s.Stages, 5)
	require.Equal(t, map[string]int{"FAILED": 3}, s.Stages[1].Counts)
	require.Equal(t, map[string]int{"WAITING": 3}, s.Stages[2].Counts)

	r = runCLI(t, url, "plan", "show", p.PlanID)
	requireCode(t, cli.ExitOK, r)
	out := r.stdout
	assert.Regexp(t, `(?m)^`+p.PlanID+`\s+mixed\s+RUNNING\s+6\s+WAITING=3 FAILED=3\s`, out, "the plan's row")
	// The matrix: the statuses the plan has tasks in, a row per stage and past the last, the totals.
	for _, line := range []string{
		`STAGE\s+WAITING\s+FAILED`,
		`prep \(1/4\)\s+-\s+-`,
		`fragile \(2/4\)\s+-\s+3`,
		`gate \(3/4\)\s+3\s+-`,
		`after \(4/4\)\s+-\s+-`,
		`\(all stages done\)\s+-\s+-`,
		`total 6\s+3\s+3`,
	} {
		assert.Regexp(t, `(?m)^`+line+`$`, out)
	}
	// The failure classes, most first, with a sample; the gate and how to decide it.
	assert.Regexp(t, `(?m)^FAILURE CLASS\s+TASKS\s+SAMPLE TENANT\s+SAMPLE MESSAGE$`, out)
	assert.Regexp(t, `(?m)^permanent\s+2\s+perm-[12]\s+.*refused: 409 conflict`, out)
	assert.Regexp(t, `(?m)^retryable\s+1\s+flap-1\s+.*upstream: 503`, out)
	assert.Less(t, strings.Index(out, "\npermanent"), strings.Index(out, "\nretryable"), "most first")
	assert.Contains(t, out, "executor plan bulk retry "+p.PlanID+" --class C --from-checkpoint")
	assert.Regexp(t, `(?m)^GATE\s+WAITING\s+DECIDE$`, out)
	assert.Regexp(t, `(?m)^gate \(3/4\)\s+3\s+executor plan bulk approve `+p.PlanID+` --stage gate`, out)
	assert.NotContains(t, out, "SLOWEST RUNNING", "nothing runs")

	// -o json is the plan, as before, without its task ids.
	r = runCLI(t, url, "plan", "show", p.PlanID, "-o", "json")
	requireCode(t, cli.ExitOK, r)
	shown := decode[wire.Plan](t, r.stdout)
	assert.Equal(t, p.PlanID, shown.PlanID)
	assert.Equal(t, map[string]int{"total": 6, "WAITING": 3, "FAILED": 3}, nonZero(shown.Progress))
	assert.Empty(t, shown.TaskIDs)
	assert.NotContains(t, r.stdout, "statuses", "not the summary")
}

// nonZero keeps the non-zero counts of a plan's progress.
func nonZero(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

// plan bulk approve decides the gate of every WAITING task matching the filters at once; the
// others keep waiting.
func TestPlanBulkApprove(t *testing.T) {
	t.Parallel()
	url := startServer(t).URL()
	p := submitRequest(t, url, wire.PlanRequest{
		Stages:  []wire.StageRequest{noop("prep"), approval("gate", "go?"), noop("after")},
		Tenants: tenantsOf("eu-1", "eu-2", "eu-3", "us-1", "us-2"),
	})
	requireCode(t, cli.ExitNeedsOperator, runCLI(t, url, "plan", "show", p.PlanID, "--watch"))

	r := runCLI(t, url, "plan", "bulk", "approve", p.PlanID, "--stage", "gate", "--tenant", "eu-", "--comment", "CHG-4711")
	requireCode(t, cli.ExitOK, r)
	assert.Equal(t, "approve: matched 3, applied 3, skipped 0\n", r.stdout)
	for _, tenant := range []string{"eu-1", "eu-2", "eu-3"} {
		tk := waitTenant(t, url, tenant, "COMPLETED")
		require.NotNil(t, tk.Decision, tenant)
		assert.True(t, tk.Decision.Approved)
		assert.Equal(t, "CHG-4711", tk.Decision.Comment)
	}
	for _, tenant := range []string{"us-1", "us-2"} {
		assert.Equal(t, "WAITING", waitTenant(t, url, tenant, "WAITING").Status, "%s does not match the filter", tenant)
	}

	// Nothing left matches: zero counts, exit 0.
	r = runCLI(t, url, "plan", "bulk", "approve", p.PlanID, "--tenant", "eu-", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	assert.Equal(t, wire.BulkResult{PlanID: p.PlanID, Action: "approve", Skipped: []wire.TaskRef{}}, emptySkipped(decode[wire.BulkResult](t, r.stdout)))

	r = runCLI(t, url, "plan", "bulk", "reject", p.PlanID, "--status", "waiting", "--comment", "not today", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	res := decode[wire.BulkResult](t, r.stdout)
	assert.Equal(t, "reject", res.Action)
	assert.Equal(t, []int{2, 2, 0}, []int{res.Matched, res.Applied, res.SkippedCount})
	r = runCLI(t, url, "plan", "show", p.PlanID, "--watch", "-o", "json")
	requireCode(t, cli.ExitFailure, r)
	assert.Equal(t, map[string]int{"total": 5, "COMPLETED": 3, "FAILED": 2}, nonZero(decode[wire.Plan](t, r.stdout).Progress))
}

// emptySkipped makes a nil skipped list an empty one.
func emptySkipped(r wire.BulkResult) wire.BulkResult {
	if r.Skipped == nil {
		r.Skipped = []wire.TaskRef{}
	}
	return r
}

// plan bulk retry --class retries the tasks that failed with that class only, from their
// checkpoint or from stage 0.
func TestPlanBulkRetryByClass(t *testing.T) {
	t.Parallel()
	url, p, kind := mixedPlan(t)
	kind.broken.Store(false)

	r := runCLI(t, url, "plan", "bulk", "retry", p.PlanID, "--class", "retryable", "--from-checkpoint")
	requireCode(t, cli.ExitOK, r)
	assert.Equal(t, "retry: matched 1, applied 1, skipped 0\n", r.stdout)
	tk := waitTenant(t, url, "flap-1", "WAITING") // past fragile, at the gate
	assert.Equal(t, 2, tk.Attempt)
	assert.Equal(t, 2, kind.count("flap-1/fragile"))
	for _, tenant := range []string{"perm-1", "perm-2"} {
		assert.Equal(t, "FAILED", waitTenant(t, url, tenant, "FAILED").Status, "%s failed with another class", tenant)
	}

	r = runCLI(t, url, "plan", "bulk", "retry", p.PlanID, "--class", "permanent", "--status", "failed", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	res := decode[wire.BulkResult](t, r.stdout)
	assert.Equal(t, []int{2, 2, 0}, []int{res.Matched, res.Applied, res.SkippedCount})
	for _, tenant := range []string{"perm-1", "perm-2"} {
		tk := waitTenant(t, url, tenant, "WAITING")
		assert.Equal(t, 2, tk.Attempt)
	}

	// Every task is now at the gate: one bulk approve completes the plan.
	r = runCLI(t, url, "plan", "bulk", "approve", p.PlanID, "--stage", "gate")
	requireCode(t, cli.ExitOK, r)
	assert.Equal(t, "approve: matched 6, applied 6, skipped 0\n", r.stdout)
	r = runCLI(t, url, "plan", "show", p.PlanID, "--watch", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	assert.Equal(t, 6, decode[wire.Plan](t, r.stdout).Progress["COMPLETED"])
}

func TestPlanScaleUsageErrors(t *testing.T) {
	t.Parallel()
	url := deadURL(t) // a usage error never reaches the server
	tests := []struct {
		name string
		args []string
	}{
		{name: "unknown status in a list", args: []string{"plan", "tasks", "x", "--status", "FAILED,DONE"}},
		{name: "unknown sort", args: []string{"plan", "tasks", "x", "--sort", "age"}},
		{name: "page size 0", args: []string{"plan", "tasks", "x", "--page-size", "0"}},
		{name: "page size above the maximum", args: []string{"plan", "tasks", "x", "--page-size", "1001"}},
		{name: "missing plan id on summary", args: []string{"plan", "summary"}},
		{name: "bulk without an action", args: []string{"plan", "bulk"}},
		{name: "unknown bulk action", args: []string{"plan", "bulk", "pause", "x"}},
		{name: "bulk without a plan id", args: []string{"plan", "bulk", "approve"}},
		{name: "bulk approve of a status it cannot change", args: []string{"plan", "bulk", "approve", "x", "--status", "FAILED"}},
		{name: "bulk retry of a status it cannot change", args: []string{"plan", "bulk", "retry", "x", "--status", "FAILED,WAITING"}},
		{name: "bulk cancel of an ended status", args: []string{"plan", "bulk", "cancel", "x", "--status", "COMPLETED"}},
		{name: "comment on a retry", args: []string{"plan", "bulk", "retry", "x", "--comment", "why"}},
		{name: "from-checkpoint on an approve", args: []string{"plan", "bulk", "approve", "x", "--from-checkpoint"}},
		{name: "an argument to events", args: []string{"events", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, url, tt.args...)
			requireCode(t, cli.ExitUsage, r)
			requireErrorLine(t, r)
			assert.Empty(t, r.stdout)
		})
	}
}

func TestPlanScaleRemoteErrors(t *testing.T) {
	t.Parallel()
	url := startServer(t).URL()
	const unknown = "01JD0000000000000000000000"
	tests := []struct {
		name   string
		args   []string
		status string
	}{
		{name: "summary of an unknown plan", args: []string{"plan", "summary", unknown}, status: "404"},
		{name: "show of an unknown plan", args: []string{"plan", "show", unknown}, status: "404"},
		{name: "tasks of an unknown plan", args: []string{"plan", "tasks", unknown, "--stage", "a"}, status: "404"},
		{name: "bulk approve of an unknown plan", args: []string{"plan", "bulk", "approve", unknown}, status: "404"},
		{name: "bulk retry of a malformed plan id", args: []string{"plan", "bulk", "retry", "not-a-ulid", "-o", "json"}, status: "(field: planId)"},
		{name: "events of a malformed plan id", args: []string{"events", "--plan", "not-a-ulid"}, status: "(field: plan)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			requireRemoteError(t, runCLI(t, url, tt.args...), tt.status)
		})
	}
}

// events prints a plan's events as it runs, one line each, until interrupted (exit 0).
func TestEventsFollowsAPlan(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		output string
		// parse reads one line of output as kind, tenant, status and what happened.
		parse func(t *testing.T, planID, line string) (kind, tenant, status, what string)
	}{
		{name: "table", output: "table", parse: func(t *testing.T, planID, line string) (string, string, string, string) {
			t.Helper()
			m := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z  (\w+)\s+(\S+)  (\S+)  (\S+)\s*(.*)$`).FindStringSubmatch(line)
			require.NotNil(t, m, "line %q", line)
			assert.Equal(t, planID, m[2])
			what, _, _ := strings.Cut(m[5], ",") // "completed stage a, run 1"
			return m[1], m[3], m[4], what
		}},
		{name: "json", output: "json", parse: func(t *testing.T, planID, line string) (string, string, string, string) {
			t.Helper()
			e := decode[wire.Event](t, line)
			assert.Equal(t, planID, e.PlanID)
			assert.NotEmpty(t, e.ID)
			tenant, what := e.TenantID, ""
			if tenant == "" {
				tenant = "-"
			}
			if e.Kind == "stage" {
				what = fmt.Sprintf("completed %s (%d/3)", e.StageName, e.Stage+1)
			}
			return e.Kind, tenant, e.Status, what
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url := startServer(t).URL()
			p := submitRequest(t, url, wire.PlanRequest{
				Stages:  []wire.StageRequest{approval("gate", "go?"), noop("a"), noop("b")},
				Tenants: tenantsOf("ev-1", "ev-2"),
			})
			requireCode(t, cli.ExitNeedsOperator, runCLI(t, url, "plan", "show", p.PlanID, "--watch"))
			// Another plan's events are not printed.
			other := submitRequest(t, url, wire.PlanRequest{Stages: []wire.StageRequest{approval("gate", "go?")}, Tenants: tenantsOf("other-1")})

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stdout, stderr syncBuffer
			code := make(chan int, 1)
			go func() {
				code <- cli.Main(ctx, []string{"--server", url, "events", "--plan", p.PlanID, "-o", tt.output}, &stdout, &stderr)
			}()
			require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "following events of plan "+p.PlanID) },
				10*time.Second, 10*time.Millisecond, "stderr: %s", stderr.String())

			requireCode(t, cli.ExitOK, runCLI(t, url, "approve", "--tenant", "other-1"))
			for _, tenant := range []string{"ev-1", "ev-2"} {
				requireCode(t, cli.ExitOK, runCLI(t, url, "approve", "--tenant", tenant))
			}
			// Until the plan's end and both tenants' last stage are printed (in whichever order).
			done := func() bool {
				out := stdout.String()
				return planEnded(out) && lastStageDone(out, "ev-1") && lastStageDone(out, "ev-2")
			}
			require.Eventually(t, done, 10*time.Second, 10*time.Millisecond, "stdout: %s", stdout.String())
			cancel()
			select {
			case c := <-code:
				assert.Equal(t, cli.ExitOK, c, "stderr: %s", stderr.String())
			case <-time.After(10 * time.Second):
				require.FailNow(t, "events did not stop when interrupted")
			}
			assert.NotContains(t, stdout.String(), other.PlanID)
			assert.NotContains(t, stderr.String(), "error")

			var stages []string
			var planStatuses []string
			tenantStatuses := map[string][]string{}
			for _, line := range strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n") {
				kind, tenant, status, what := tt.parse(t, p.PlanID, line)
				switch kind {
				case "plan":
					assert.Equal(t, "-", tenant)
					planStatuses = append(planStatuses, status)
				case "stage":
					stages = append(stages, tenant+" "+what)
				case "task":
					tenantStatuses[tenant] = append(tenantStatuses[tenant], status)
				default:
					t.Errorf("unexpected kind %q in %q", kind, line)
				}
			}
			for _, want := range []string{"ev-1 completed a (2/3)", "ev-1 completed b (3/3)", "ev-2 completed a (2/3)", "ev-2 completed b (3/3)"} {
				assert.Contains(t, stages, want)
			}
			assert.Equal(t, []string{"COMPLETED"}, planStatuses[len(planStatuses)-1:], "the plan's last event")
			for _, tenant := range []string{"ev-1", "ev-2"} {
				assert.Contains(t, tenantStatuses[tenant], "RUNNING", "%s ran after its approval", tenant)
			}
		})
	}
}

// planEnded reports whether a plan event with status COMPLETED was printed (table or JSON).
func planEnded(out string) bool {
	return regexp.MustCompile(`(?m)(Z  plan\s+\S+\s+-\s+COMPLETED|"kind":"plan".*"status":"COMPLETED")`).MatchString(out)
}

// lastStageDone reports whether the stage event of tenant's last stage (b) was printed
// (table or JSON).
func lastStageDone(out, tenant string) bool {
	return regexp.MustCompile(`(?m)(Z  stage\s+\S+  ` + tenant + `  .*completed b \(3/3\)|"kind":"stage".*"tenantId":"` + tenant + `".*"stageName":"b")`).MatchString(out)
}
