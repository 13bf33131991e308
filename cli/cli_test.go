package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

// startServer starts an executor on a free port, shut down when the test ends.
func startServer(t *testing.T) *server.Server {
	t.Helper()
	return servertest.Start(t)
}

type result struct {
	code           int
	stdout, stderr string
}

// runCLI runs the command line in-process against serverURL.
func runCLI(t *testing.T, serverURL string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := cli.Main(ctx, append([]string{"--server", serverURL}, args...), &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// requireCode fails with the command's output when it exited with another status.
func requireCode(t *testing.T, want int, r result) {
	t.Helper()
	require.Equal(t, want, r.code, "exit status\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
}

// requireErrorLine checks that a failure printed exactly one "error: " line (usage errors
// add one hint line), or under -o json one error document whose exit is the run's.
func requireErrorLine(t *testing.T, r result) {
	t.Helper()
	if strings.HasPrefix(r.stderr, "{\"error\"") {
		doc := requireErrorDoc(t, r)
		assert.NotEmpty(t, doc.Error.Message)
		return
	}
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	require.NotEmpty(t, lines)
	assert.True(t, strings.HasPrefix(lines[0], "error: "), "stderr: %q", r.stderr)
	if r.code == cli.ExitFailure {
		assert.Len(t, lines, 1, "stderr: %q", r.stderr)
	}
}

func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal([]byte(s), &v), "not the expected JSON: %s", s)
	return v
}

// writePlan writes a plan with the given stages for tenants to a JSON file.
func writePlan(t *testing.T, name string, tenants []string, stages ...wire.StageRequest) string {
	t.Helper()
	req := wire.PlanRequest{Name: name, Stages: stages}
	for _, id := range tenants {
		req.Tenants = append(req.Tenants, wire.TenantRequest{ID: id, Params: map[string]any{"version": "1.0.0"}})
	}
	b, err := json.Marshal(req)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), name+".json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

func noop(name string) wire.StageRequest { return wire.StageRequest{Name: name, Kind: "noop"} }

func sleep(name, d string) wire.StageRequest {
	return wire.StageRequest{Name: name, Kind: "sleep", Params: map[string]any{"duration": d}}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	planFile := writePlan(t, "usage", []string{"u1"}, noop("a"))
	tests := []struct {
		name string
		args []string
	}{
		{name: "unknown flag", args: []string{"status", "--tenant", "a", "--bogus"}},
		{name: "unknown global flag", args: []string{"--bogus", "plan", "list"}},
		{name: "unknown command", args: []string{"deploy"}},
		{name: "unknown plan subcommand", args: []string{"plan", "destroy", "x"}},
		{name: "missing subcommand", args: []string{"plan"}},
		{name: "no command", args: nil},
		{name: "missing --tenant", args: []string{"status"}},
		{name: "empty --tenant", args: []string{"checkpoint", "--tenant", ""}},
		{name: "missing --tenant on retry", args: []string{"retry", "--from-checkpoint"}},
		{name: "missing --tenant on cancel", args: []string{"cancel"}},
		{name: "missing --tenant on rollback", args: []string{"rollback"}},
		{name: "bad -o", args: []string{"-o", "xml", "plan", "list"}},
		{name: "-o name where objects have no id", args: []string{"events", "-o", "name"}},
		{name: "--timeout without --wait", args: []string{"submit", "-f", planFile, "--timeout", "1m"}},
		{name: "--timeout without --watch", args: []string{"plan", "show", "01JD0000000000000000000000", "--timeout", "1m"}},
		{name: "negative --timeout", args: []string{"status", "--tenant", "a", "--watch", "--timeout", "-1s"}},
		{name: "label selector without =", args: []string{"plan", "list", "-l", "team"}},
		{name: "label given twice", args: []string{"plan", "list", "-l", "team=a,team=b"}},
		{name: "bad --output", args: []string{"status", "--tenant", "a", "--output", "xml"}},
		{name: "missing -f", args: []string{"submit"}},
		{name: "--wait with --dry-run", args: []string{"submit", "-f", planFile, "--wait", "--dry-run"}},
		{name: "missing plan id", args: []string{"plan", "show"}},
		{name: "extra argument", args: []string{"plan", "show", "a", "b"}},
		{name: "argument to a flag-only command", args: []string{"status", "t1"}},
		{name: "missing task id", args: []string{"task", "show"}},
		{name: "bad plan status", args: []string{"plan", "list", "--status", "DONE"}},
		{name: "bad task status", args: []string{"plan", "tasks", "x", "--status", "DONE"}},
		{name: "negative limit", args: []string{"plan", "list", "--limit", "-1"}},
		{name: "limit above the maximum", args: []string{"plan", "list", "--limit", "5000"}},
		{name: "non-numeric limit", args: []string{"plan", "list", "--limit", "ten"}},
		{name: "bad --server", args: []string{"--server", "127.0.0.1:8080", "plan", "list"}},
		{name: "bad --workers", args: []string{"serve", "--workers", "0"}},
		{name: "missing --tenant on approve", args: []string{"approve"}},
		{name: "missing --tenant on reject", args: []string{"reject", "--comment", "no"}},
		{name: "argument to approve", args: []string{"approve", "t1"}},
		{name: "missing --tenant on lock", args: []string{"lock"}},
		{name: "empty --tenant on unlock", args: []string{"unlock", "--tenant", ""}},
		{name: "missing plan id on retry", args: []string{"plan", "retry", "--from-checkpoint"}},
		{name: "retry of a status that cannot be retried", args: []string{"plan", "retry", "x", "--status", "COMPLETED"}},
		{name: "retry of an unknown status", args: []string{"plan", "retry", "x", "--status", "FAILED,DONE"}},
		{name: "extra argument on plan approve", args: []string{"plan", "approve", "a", "b"}},
		{name: "missing plan id on plan reject", args: []string{"plan", "reject"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, srv.URL(), tt.args...)
			requireCode(t, cli.ExitUsage, r)
			requireErrorLine(t, r)
		})
	}
}

func TestRemoteErrors(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	closed := deadURL(t)
	tests := []struct {
		name   string
		server string
		args   []string
	}{
		{name: "unknown tenant", args: []string{"status", "--tenant", "nobody"}},
		{name: "unknown tenant as json", args: []string{"-o", "json", "status", "--tenant", "nobody"}},
		{name: "checkpoint of unknown tenant", args: []string{"checkpoint", "--tenant", "nobody"}},
		{name: "retry of unknown tenant", args: []string{"retry", "--tenant", "nobody", "--from-checkpoint"}},
		{name: "pause of unknown tenant", args: []string{"pause", "--tenant", "nobody"}},
		{name: "invalid tenant id", args: []string{"status", "--tenant", "bad:id{x}"}},
		{name: "unknown plan", args: []string{"plan", "show", "01JD0000000000000000000000"}},
		{name: "malformed plan id", args: []string{"plan", "show", "not-a-ulid"}},
		{name: "unknown task", args: []string{"task", "show", "01JD0000000000000000000000"}},
		{name: "missing plan file", args: []string{"submit", "-f", filepath.Join(t.TempDir(), "nope.yaml")}},
		{name: "server unreachable", server: closed, args: []string{"plan", "list"}},
		{name: "approve of unknown tenant", args: []string{"approve", "--tenant", "nobody"}},
		{name: "reject of unknown tenant as json", args: []string{"-o", "json", "reject", "--tenant", "nobody"}},
		{name: "lock of unknown tenant", args: []string{"lock", "--tenant", "nobody"}},
		{name: "unlock of unknown tenant", args: []string{"unlock", "--tenant", "nobody"}},
		{name: "retry of unknown plan", args: []string{"plan", "retry", "01JD0000000000000000000000", "--from-checkpoint"}},
		{name: "approve of malformed plan id", args: []string{"plan", "approve", "not-a-ulid"}},
		{name: "lock with server unreachable", server: closed, args: []string{"lock", "--tenant", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url := srv.URL()
			if tt.server != "" {
				url = tt.server
			}
			r := runCLI(t, url, tt.args...)
			requireCode(t, cli.ExitFailure, r)
			requireErrorLine(t, r)
			assert.Empty(t, r.stdout)
		})
	}
}

// deadURL is the URL of a port nothing listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	return url
}

func TestSubmitJSONPrintsPlan(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	file := writePlan(t, "submit-json", []string{"sj1", "sj2"}, noop("a"), noop("b"))

	r := runCLI(t, srv.URL(), "submit", "-f", file, "-o", "json")
	requireCode(t, cli.ExitOK, r)
	p := decode[wire.Plan](t, r.stdout)
	require.NotEmpty(t, p.PlanID)
	assert.Equal(t, "submit-json", p.Name)
	assert.Len(t, p.TaskIDs, 2)
	assert.Equal(t, 2, p.Progress["total"])
	assert.Equal(t, []wire.StageRef{{Name: "a", Kind: "noop"}, {Name: "b", Kind: "noop"}}, p.Stages)

	r = runCLI(t, srv.URL(), "plan", "show", p.PlanID, "--watch", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	shown := decode[wire.Plan](t, r.stdout)
	assert.Equal(t, p.PlanID, shown.PlanID)
	assert.Equal(t, "COMPLETED", shown.Status)
	assert.Equal(t, 2, shown.Progress["COMPLETED"])

	r = runCLI(t, srv.URL(), "plan", "list", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	list := decode[wire.PlanList](t, r.stdout)
	require.Len(t, list.Plans, 1)
	assert.Equal(t, p.PlanID, list.Plans[0].PlanID)

	r = runCLI(t, srv.URL(), "plan", "tasks", p.PlanID, "--status", "completed", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	tasks := decode[wire.TaskList](t, r.stdout)
	require.Len(t, tasks.Tasks, 2)
	assert.Equal(t, []string{"sj1", "sj2"}, []string{tasks.Tasks[0].TenantID, tasks.Tasks[1].TenantID})

	r = runCLI(t, srv.URL(), "task", "show", tasks.Tasks[1].TaskID, "-o", "json")
	requireCode(t, cli.ExitOK, r)
	task := decode[wire.Task](t, r.stdout)
	assert.Equal(t, "sj2", task.TenantID)
	assert.Equal(t, "COMPLETED", task.Status)

	r = runCLI(t, srv.URL(), "checkpoint", "--tenant", "sj1", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	cp := decode[wire.Checkpoint](t, r.stdout)
	assert.Equal(t, 1, cp.LastCompletedStageIndex)
	assert.Equal(t, []string{"a", "b"}, cp.CompletedStages)
}

func TestSubmitWait(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	file := writePlan(t, "wait", []string{"w1", "w2", "w3"}, noop("a"), sleep("bake", "50ms"))

	r := runCLI(t, srv.URL(), "submit", "-f", file, "--wait", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	p := decode[wire.Plan](t, r.stdout)
	assert.Equal(t, "COMPLETED", p.Status)
	assert.Equal(t, 3, p.Progress["COMPLETED"])
	assert.NotNil(t, p.FinishedAt)
}

func TestDryRunCreatesNothing(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	file := writePlan(t, "dry", []string{"d1", "d2"}, noop("a"),
		wire.StageRequest{Name: "call", Kind: "http", Params: map[string]any{
			"method": "POST", "url": "http://127.0.0.1:1/{{.TenantID}}/{{.Params.version}}",
		}})

	r := runCLI(t, srv.URL(), "submit", "-f", file, "--dry-run", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	d := decode[wire.DryRun](t, r.stdout)
	assert.True(t, d.DryRun)
	assert.Empty(t, d.Conflicts)
	require.Len(t, d.Tenants, 2)
	require.Len(t, d.Tenants[1].Stages, 2)
	assert.Equal(t, "http://127.0.0.1:1/d2/1.0.0", d.Tenants[1].Stages[1].Params["url"])

	r = runCLI(t, srv.URL(), "plan", "list", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	assert.Empty(t, decode[wire.PlanList](t, r.stdout).Plans)
	for _, tenant := range []string{"d1", "d2"} {
		requireCode(t, cli.ExitFailure, runCLI(t, srv.URL(), "status", "--tenant", tenant))
	}

	// The table form too.
	r = runCLI(t, srv.URL(), "submit", "-f", file, "--dry-run")
	requireCode(t, cli.ExitOK, r)
	assert.Contains(t, r.stdout, "d2")
}

// A tenant with a task that has not ended: the dry run reports it (exit 1), the submission
// is refused (exit 1), and the running plan is untouched until cancelled.
func TestConflicts(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	long := writePlan(t, "long", []string{"c1"}, sleep("bake", "1m"))
	again := writePlan(t, "again", []string{"c1", "c2"}, noop("a"))

	r := runCLI(t, srv.URL(), "submit", "-f", long, "-o", "json")
	requireCode(t, cli.ExitOK, r)
	first := decode[wire.Plan](t, r.stdout)

	r = runCLI(t, srv.URL(), "submit", "-f", again, "--dry-run", "-o", "json")
	requireCode(t, cli.ExitFailure, r)
	assert.Equal(t, []string{"c1"}, decode[wire.DryRun](t, r.stdout).Conflicts)

	r = runCLI(t, srv.URL(), "submit", "-f", again, "-o", "json")
	requireCode(t, cli.ExitFailure, r)
	requireErrorLine(t, r)
	assert.Empty(t, r.stdout)

	r = runCLI(t, srv.URL(), "cancel", "--tenant", "c1", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	assert.Equal(t, first.PlanID, decode[wire.Task](t, r.stdout).PlanID)

	r = runCLI(t, srv.URL(), "plan", "show", first.PlanID, "--watch", "-o", "json")
	requireCode(t, cli.ExitFailure, r) // ended, but not COMPLETED
	assert.NotEqual(t, "COMPLETED", decode[wire.Plan](t, r.stdout).Status)

	r = runCLI(t, srv.URL(), "status", "--tenant", "c1", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	assert.Equal(t, "CANCELLED", decode[wire.Task](t, r.stdout).Status)
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	file := writePlan(t, "idem", []string{"i1"}, noop("a"))

	var ids []string
	for range 2 {
		r := runCLI(t, srv.URL(), "submit", "-f", file, "--idempotency-key", "release-1", "-o", "json")
		requireCode(t, cli.ExitOK, r)
		ids = append(ids, decode[wire.Plan](t, r.stdout).PlanID)
	}
	assert.Equal(t, ids[0], ids[1])
}

func TestPlanControls(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	file := writePlan(t, "controls", []string{"p1", "p2"}, sleep("bake", "1m"))
	r := runCLI(t, srv.URL(), "submit", "-f", file, "-o", "json")
	requireCode(t, cli.ExitOK, r)
	id := decode[wire.Plan](t, r.stdout).PlanID

	r = runCLI(t, srv.URL(), "plan", "pause", id, "-o", "json")
	requireCode(t, cli.ExitOK, r)
	assert.Equal(t, id, decode[wire.Plan](t, r.stdout).PlanID)

	r = runCLI(t, srv.URL(), "plan", "cancel", id, "-o", "json")
	requireCode(t, cli.ExitOK, r)
	r = runCLI(t, srv.URL(), "plan", "show", id, "--watch", "-o", "json")
	requireCode(t, cli.ExitFailure, r)
	assert.Equal(t, "CANCELLED", decode[wire.Plan](t, r.stdout).Status)

	r = runCLI(t, srv.URL(), "plan", "list", "--status", "CANCELLED", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	require.Len(t, decode[wire.PlanList](t, r.stdout).Plans, 1)
	r = runCLI(t, srv.URL(), "plan", "list", "--status", "RUNNING", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	assert.Empty(t, decode[wire.PlanList](t, r.stdout).Plans)
}

// flaky is a custom stage kind that fails permanently while broken is set, and counts its
// runs per tenant and stage.
type flaky struct {
	broken atomic.Bool
	mu     sync.Mutex
	runs   map[string]int
}

func (f *flaky) Run(_ context.Context, req stage.Request) (json.RawMessage, error) {
	f.mu.Lock()
	f.runs[req.TenantID+"/"+req.Stage]++
	f.mu.Unlock()
	if req.Stage == "fragile" && f.broken.Load() {
		return nil, stage.Permanent(errors.New("broken on purpose"))
	}
	return json.RawMessage(`{"ok":true}`), nil
}

func (f *flaky) count(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.runs[key]
}

// retry without --from-checkpoint restarts at stage 0: every stage runs again.
func TestRetryFromStageZero(t *testing.T) {
	t.Parallel()
	kind := &flaky{runs: map[string]int{}}
	kind.broken.Store(true)
	srv := servertest.Start(t, func(k *stagekind.Registry) { require.NoError(t, k.Register("flaky", kind)) })
	file := writePlan(t, "flaky", []string{"f1"},
		wire.StageRequest{Name: "first", Kind: "flaky"}, wire.StageRequest{Name: "fragile", Kind: "flaky"})

	r := runCLI(t, srv.URL(), "submit", "-f", file, "--wait", "-o", "json")
	requireCode(t, cli.ExitFailure, r)
	assert.Equal(t, "FAILED", decode[wire.Plan](t, r.stdout).Status)

	kind.broken.Store(false)
	r = runCLI(t, srv.URL(), "retry", "--tenant", "f1", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	assert.Equal(t, 2, decode[wire.Task](t, r.stdout).Attempt)

	task := waitTenant(t, srv.URL(), "f1", "COMPLETED")
	assert.Equal(t, 2, task.Attempt)
	assert.Equal(t, 2, kind.count("f1/first"), "stage 0 ran again")
	assert.Equal(t, 2, kind.count("f1/fragile"))
}

// waitTenant polls `status --tenant` until the task has status (bounded).
func waitTenant(t *testing.T, url, tenant, status string) wire.Task {
	t.Helper()
	var last wire.Task
	require.Eventually(t, func() bool {
		r := runCLI(t, url, "status", "--tenant", tenant, "-o", "json")
		if r.code != cli.ExitOK {
			return false
		}
		last = decode[wire.Task](t, r.stdout)
		return last.Status == status
	}, 10*time.Second, 50*time.Millisecond, "tenant %s never reached %s", tenant, status)
	return last
}

func TestTableOutput(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	file := writePlan(t, "tables", []string{"tb1"}, noop("a"), noop("b"))
	r := runCLI(t, srv.URL(), "submit", "-f", file, "--wait")
	requireCode(t, cli.ExitOK, r)

	tests := []struct {
		name    string
		args    []string
		headers []string
		values  []string
	}{
		{name: "plan list", args: []string{"plan", "list"},
			headers: []string{"PLAN ID", "NAME", "STATUS", "PROGRESS"}, values: []string{"tables", "COMPLETED", "COMPLETED=1"}},
		{name: "status", args: []string{"status", "--tenant", "tb1"},
			headers: []string{"TENANT", "STATUS", "ATTEMPT", "STAGE", "CHECKPOINT", "LEASE", "LAST ERROR"}, values: []string{"tb1", "COMPLETED", "1 (b)"}},
		{name: "checkpoint", args: []string{"checkpoint", "--tenant", "tb1"},
			headers: []string{"TENANT", "LAST COMPLETED", "COMPLETED STAGES"}, values: []string{"tb1", "a,b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, srv.URL(), tt.args...)
			requireCode(t, cli.ExitOK, r)
			lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
			require.GreaterOrEqual(t, len(lines), 2, "header and a row: %q", r.stdout)
			for _, h := range tt.headers {
				assert.Contains(t, lines[0], h)
			}
			for _, v := range tt.values {
				assert.Contains(t, lines[1], v)
			}
		})
	}
}

// The examples are valid plans, and the YAML and JSON forms of hello are the same plan.
func TestExamples(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	dryRuns := map[string]wire.DryRun{}
	for _, name := range []string{"hello.yaml", "hello.json"} {
		r := runCLI(t, srv.URL(), "submit", "-f", filepath.Join("..", "examples", name), "--dry-run", "-o", "json")
		requireCode(t, cli.ExitOK, r)
		d := decode[wire.DryRun](t, r.stdout)
		require.Len(t, d.Tenants, 3, name)
		for _, tenant := range d.Tenants {
			names := make([]string, len(tenant.Stages))
			for i, s := range tenant.Stages {
				names[i] = s.Name
			}
			assert.Equal(t, []string{"validate", "push-config", "bake", "health"}, names)
		}
		dryRuns[name] = d
	}
	assert.Equal(t, dryRuns["hello.yaml"], dryRuns["hello.json"])

	// The rollout-control examples submit for real, each on a server of its own.
	examples := []struct {
		file  string
		check func(t *testing.T, url string, p wire.Plan)
	}{
		{"canary-approval.yaml", func(t *testing.T, url string, p wire.Plan) {
			assert.Equal(t, 30, p.StartRate)
			require.NotNil(t, p.Canary)
			assert.Equal(t, wire.Canary{Tenants: 1, Then: "approve", Phase: "CANARY"}, *p.Canary)
			tk := waitTenant(t, url, "tenant-1", "WAITING")
			require.NotNil(t, tk.Wait)
			assert.Equal(t, "change-approval", tk.Wait.Stage)
			assert.Equal(t, "Roll config 1.2.3 out to tenant-1?", tk.Wait.Message)
		}},
		{"scheduled.yaml", func(t *testing.T, url string, p wire.Plan) {
			require.NotNil(t, p.StartAt)
			if !p.StartAt.After(time.Now()) { // its fixed startAt has passed: it starts at once
				assert.NotEqual(t, "SCHEDULED", p.Status)
				return
			}
			assert.Equal(t, "SCHEDULED", p.Status)
			r := runCLI(t, url, "plan", "cancel", p.PlanID, "-o", "json")
			requireCode(t, cli.ExitOK, r)
			assert.Equal(t, "CANCELLED", decode[wire.Plan](t, r.stdout).Status, "a scheduled plan is cancelled before it starts")
		}},
	}
	for _, ex := range examples {
		t.Run(ex.file, func(t *testing.T) {
			t.Parallel()
			url := startServer(t).URL()
			r := runCLI(t, url, "submit", "-f", filepath.Join("..", "examples", ex.file), "-o", "json")
			requireCode(t, cli.ExitOK, r)
			ex.check(t, url, decode[wire.Plan](t, r.stdout))
		})
	}
}

func TestExecutorsCommand(t *testing.T) {
	t.Parallel()
	srv := servertest.With(t, server.Config{Name: "cli-solo"})
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, stdout string)
	}{
		{name: "table", args: []string{"executors"}, check: func(t *testing.T, stdout string) {
			t.Helper()
			lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
			require.Len(t, lines, 2, "header and one row: %q", stdout)
			for _, h := range []string{"NAME", "ADDRESS", "ALIVE", "SELF", "TOPOLOGY", "RUNS", "STARTED", "LAST HEARTBEAT"} {
				assert.Contains(t, lines[0], h)
			}
			assert.Regexp(t, `^cli-solo\s+`+srv.Addr()+`\s+yes\s+\*\s+alone\s+0\s+\S+Z\s+\d+s ago\s+approval,exec,http,noop,prometheus,sleep$`, lines[1])
		}},
		{name: "json", args: []string{"executors", "-o", "json"}, check: func(t *testing.T, stdout string) {
			t.Helper()
			l := decode[wire.ExecutorList](t, stdout)
			require.Len(t, l.Executors, 1)
			e := l.Executors[0]
			assert.Equal(t, "cli-solo", e.Name)
			assert.Equal(t, srv.Addr(), e.Address)
			assert.True(t, e.Alive)
			assert.True(t, e.Self)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, srv.URL(), tt.args...)
			requireCode(t, cli.ExitOK, r)
			tt.check(t, r.stdout)
		})
	}
}
