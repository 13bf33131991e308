package main_test

// The attacks of issue 33, each against a real `executor serve` process (the embedded
// in-memory store) under an address-space limit (startUnderLimit): before the limits they
// crashed or bloated the executor. Each is refused with a 4xx problem naming its limit (or, for
// stage outputs, fails the stages naming theirs), the executor keeps answering GET /healthz
// during and after it, and its resident set stays under attackPeakRSS (attackWatch).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/wire"
)

// yamlAnchorBody is a YAML document holding one scalar of size bytes, anchored once and
// aliased aliases times: as JSON it would repeat the scalar aliases times.
func yamlAnchorBody(size, aliases int) []byte {
	var b bytes.Buffer
	b.WriteString("name: anchors\nblob: &big \"")
	b.WriteString(strings.Repeat("a", size))
	b.WriteString("\"\ncopies:\n")
	for range aliases {
		b.WriteString("  - *big\n")
	}
	return b.Bytes()
}

// yamlLaughsBody is a billion laughs: levels of lists of fan aliases of the level below, a
// short document that expands to fan^levels scalars.
func yamlLaughsBody(levels, fan int) []byte {
	var b bytes.Buffer
	b.WriteString("l0: &l0 \"lol\"\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), fan), ", "))
	}
	return b.Bytes()
}

// A YAML body whose anchor on a large scalar is aliased a thousand times (1 MiB × 1,000 in a
// 1 MB body, 256 KiB × 1,000 in a 264 KB one), or a billion laughs, is refused with 413
// payload-too-large naming body before anything is expanded, on the submission, a tenant's
// approval and a bulk route alike.
func TestAttackYAMLAnchorsAreRefusedBeforeExpansion(t *testing.T) {
	t.Parallel()
	p := startUnderLimit(t, "yaml")
	w := watchAttack(t, p)
	large, medium := yamlAnchorBody(1<<20, 1000), yamlAnchorBody(256<<10, 1000)
	tests := []struct {
		name string
		path string
		body []byte
	}{
		{"1 MiB scalar aliased 1000 times, submitted", "/v1/plans", large},
		{"1 MiB scalar aliased 1000 times, a tenant's approval", "/v1/tenants/x/approve", large},
		{"1 MiB scalar aliased 1000 times, a bulk approval", "/v1/plans/01JD7X0000000000000000000A/tasks/approve", large},
		{"256 KiB scalar aliased 1000 times, submitted", "/v1/plans", medium},
		{"a billion laughs, submitted", "/v1/plans", yamlLaughsBody(9, 10)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := exchange(t, p, http.MethodPost, tc.path, "application/yaml", tc.body)
			prob := requireProblem(t, a, http.StatusRequestEntityTooLarge, wire.ProblemPayloadTooLarge)
			assert.Equal(t, "body", prob.Field)
			t.Logf("POST %s with a %d-byte YAML body: %d in %s", tc.path, len(tc.body), a.status, a.took.Round(time.Millisecond))
		})
	}
	w.finish(t, "YAML anchors")
}

// A dry run of 20,000 tenants sharing one stage param of 64 KiB (a 0.4 MB request) would
// answer 1.3 GB if every tenant's params were rendered and kept. Templated per tenant, it is
// refused with a 400 naming the limit: `tenants` (tenants × the stages' params) or the param
// (every tenant's rendered params past 64 MiB), docs/api.md's Limits. The same param as plain
// text is refused naming tenants or answered without repeating it 20,000 times (a page of the
// tenants). The executor's resident set stays bounded either way.
func TestAttackDryRunAmplificationIsBounded(t *testing.T) {
	t.Parallel()
	const tenants = 20_000
	p := startUnderLimit(t, "dry-run")
	w := watchAttack(t, p)
	// With the JSON around it the stages' params stay under --max-params-bytes (64 KiB).
	pad := strings.Repeat("a", 64<<10-64)
	tests := []struct {
		name  string
		param string
		check func(t *testing.T, a answer)
	}{
		{"templated per tenant", "{{.TenantID}}" + pad, func(t *testing.T, a answer) {
			// 20,000 renders of 64 KiB pass the submission's 64 MiB rendering budget.
			prob := requireProblem(t, a, http.StatusBadRequest, wire.ProblemInvalidInput)
			assert.Equal(t, "stages[0].params.x", prob.Field)
		}},
		{"plain text", pad, func(t *testing.T, a answer) {
			// Every tenant is checked; the answer is a summary and one page of them.
			require.Equal(t, http.StatusOK, a.status, "%.300s", a.body)
			var d wire.DryRun
			require.NoError(t, json.Unmarshal(a.body, &d))
			assert.Equal(t, tenants, d.Summary.Tenants)
			assert.Len(t, d.Tenants, 20, "the default page")
			assert.Equal(t, 20, d.Page.NextOffset)
			assert.Less(t, a.size, int64(2<<20), "the answer repeats the 64 KiB param for every tenant")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := json.Marshal(wire.PlanRequest{Name: "amplified", Tenants: tenantsN("amp", tenants),
				Stages: []wire.StageRequest{{Name: "s", Kind: "noop", Params: map[string]any{"x": tc.param}}}})
			require.NoError(t, err)
			a := exchange(t, p, http.MethodPost, "/v1/plans?dryRun=true", "application/json", body)
			t.Logf("dry run of %d tenants × a %d-byte param (%s, a %d-byte request): %d, a %d-byte answer in %s",
				tenants, len(tc.param), tc.name, len(body), a.status, a.size, a.took.Round(time.Millisecond))
			tc.check(t, a)
		})
	}
	w.finish(t, "dry-run amplification")
}

// Templates past their budgets, in a dry run of 5 tenants, are refused with a 400 naming the
// param: `{{range 100000000}}x{{end}}` and ranges of ranges (100,000 × 100,000) alike, at
// once rather than after their 10^8 and 10^10 iterations.
func TestAttackTemplatesOverBudgetAreRefused(t *testing.T) {
	t.Parallel()
	p := startUnderLimit(t, "templates")
	w := watchAttack(t, p)
	tests := []struct{ name, param string }{
		{"a range of 100,000,000", "{{range 100000000}}x{{end}}"},
		{"a range of ranges, 100,000 × 100,000", "{{range 100000}}{{range 100000}}{{end}}{{end}}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := json.Marshal(wire.PlanRequest{Name: "ranges", Tenants: tenantsN("rng", 5),
				Stages: []wire.StageRequest{{Name: "s", Kind: "noop", Params: map[string]any{"x": tc.param}}}})
			require.NoError(t, err)
			a := exchange(t, p, http.MethodPost, "/v1/plans?dryRun=true", "application/json", body)
			prob := requireProblem(t, a, http.StatusBadRequest, wire.ProblemInvalidInput)
			assert.Equal(t, "stages[0].params.x", prob.Field)
			t.Logf("%s: %d in %s", tc.param, a.status, a.took.Round(time.Millisecond))
		})
	}
	w.finish(t, "templates over budget")
}

// sendRaw sends a POST of a JSON body to path on a connection of its own, tagged with
// X-Request-Id id, and returns the connection without reading the answer: closing it is the
// client going away. It is closed when the test ends.
func sendRaw(t *testing.T, p *executorProc, path, id string, body []byte) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nX-Request-Id: %s\r\n\r\n",
		path, p.addr, len(body), id)
	_, err = conn.Write(append([]byte(head), body...))
	require.NoError(t, err)
	return conn
}

// secretGates are one named pipe per tenant in an executor's --secrets-dir, so that the
// executor's progress through the tenants' templates is seen from outside the process:
// `{{secret .TenantID}}` opens the tenant's pipe (a secret file is read at each use) and blocks
// until the gates write its value. The gates serve the tenants in order, each as soon as the
// executor opens its pipe, except tenants[hold]: they stop there until release is closed.
type secretGates struct {
	held    chan struct{} // closed once the executor opened tenants[hold]'s pipe
	release chan struct{} // closed by the test: serve tenants[hold] and go on
	stop    chan struct{}
	done    chan struct{}
	opened  atomic.Int64 // pipes the executor opened
	err     error        // read once done is closed
}

func startSecretGates(t *testing.T, dir string, tenants []wire.TenantRequest, hold int) *secretGates {
	t.Helper()
	for _, tn := range tenants {
		require.NoError(t, syscall.Mkfifo(filepath.Join(dir, tn.ID), 0o600))
	}
	g := &secretGates{held: make(chan struct{}), release: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go g.serve(dir, tenants, hold)
	t.Cleanup(func() {
		close(g.stop)
		<-g.done
	})
	return g
}

func (g *secretGates) serve(dir string, tenants []wire.TenantRequest, hold int) {
	defer close(g.done)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for i, tn := range tenants {
		path := filepath.Join(dir, tn.ID)
		var fd int
		for {
			var err error
			// Opening for writing without blocking succeeds once a reader waits on the pipe.
			fd, err = syscall.Open(path, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
			if err == nil {
				break
			}
			if !errors.Is(err, syscall.ENXIO) {
				g.err = fmt.Errorf("open %s: %w", path, err)
				return
			}
			select {
			case <-g.stop:
				return
			case <-tick.C:
			}
		}
		g.opened.Add(1)
		if i == hold {
			close(g.held)
			select {
			case <-g.release:
			case <-g.stop:
				_ = syscall.Close(fd)
				return
			}
		}
		_, err := syscall.Write(fd, []byte("v"))
		_ = syscall.Close(fd)
		if err != nil {
			g.err = fmt.Errorf("write %s: %w", path, err)
			return
		}
	}
}

// A dry run whose every tenant's params hold a range of ranges (100,000 × 100,000), sent by a
// client that goes away while the executor renders its sixth tenant of 200: the executor stops
// rendering at the next tenant and ends the request (its access-log record says 400), where a
// render that went on would read the secrets of some 100 tenants (until the plan's range
// budget is spent). The tenants' progress is seen through their secrets, one named pipe each in
// --secrets-dir (secretGates), which hold the render at the sixth tenant until the client has
// gone: cancellation, not timing, is what stops it. Secondary: the executor's CPU time stops
// growing.
func TestAttackTemplateRenderingStopsWhenTheClientGoesAway(t *testing.T) {
	t.Parallel()
	const (
		tenants = 200
		hold    = 5 // the client goes away while the executor renders tenants[hold]
		id      = "attack-render-client-gone"
	)
	secrets := t.TempDir()
	ts := tenantsN("gone", tenants)
	g := startSecretGates(t, secrets, ts, hold)
	p := startUnderLimit(t, "render-gone", "--secrets-dir", secrets)
	w := watchAttack(t, p)
	body, err := json.Marshal(wire.PlanRequest{Name: "render-gone", Tenants: ts, Stages: []wire.StageRequest{{Name: "s", Kind: "noop",
		Params: map[string]any{"x": "{{secret .TenantID}}{{range 100000}}{{range 100000}}{{end}}{{end}}"}}}})
	require.NoError(t, err)

	conn := sendRaw(t, p, "/v1/plans?dryRun=true", id, body)
	select {
	case <-g.held:
	case <-g.done:
		require.FailNow(t, "the secret gates stopped", "%v", g.err)
	case <-time.After(30 * time.Second):
		require.FailNow(t, "the executor never rendered tenants[hold]", "pipes opened: %d", g.opened.Load())
	}
	require.EqualValues(t, hold+1, g.opened.Load(), "the render is at tenants[%d]", hold)
	require.Nil(t, accessRecord(p, id), "the request is still being answered")
	require.NoError(t, conn.Close())
	// Gives the server a moment to read the connection's end before tenants[hold] is released:
	// without it the render may notice one tenant later, which the bound below allows.
	time.Sleep(200 * time.Millisecond)
	close(g.release)

	rec, ok := waitAccessRecord(t, p, id, 30*time.Second)
	require.True(t, ok, "the request never ended after its client went away; pipes opened: %d", g.opened.Load())
	opened := g.opened.Load()
	t.Logf("client gone at tenants[%d] of %d: the request ended (%v, %v ms) after %d tenants' secrets were read",
		hold, tenants, rec["status"], rec["duration_ms"], opened)
	assert.EqualValues(t, http.StatusBadRequest, rec["status"], "the refusal the gone client would have read")
	assert.LessOrEqual(t, opened, int64(hold+2), "tenants rendered after the client went away")
	requireCPUSettles(t, p.cmd.Process.Pid, 10, 50*time.Millisecond, 25)
	assert.Equal(t, opened, g.opened.Load(), "no tenant is rendered once the request ended")
	w.finish(t, "a render whose client went away")
	select {
	case <-g.done:
		require.NoError(t, g.err)
	default: // still waiting for a tenant the executor no longer renders
	}
}

// A dry run of one tenant whose one param costs a megabyte of work per iteration
// (`{{range 100000}}{{$_ := printf "%01000000d" 0}}{{end}}`: within the range budget, writing
// nothing) took minutes of CPU, whether its client stayed or not: what the template functions
// make counts against a budget (1 MiB per stage's params for one tenant) as what it writes
// does, so it is refused with a 400 naming the param as soon as it passes it.
func TestAttackCostlyTemplateOfOneTenantIsRefused(t *testing.T) {
	t.Parallel()
	p := startUnderLimit(t, "render-one-costly")
	w := watchAttack(t, p)
	body, err := json.Marshal(wire.PlanRequest{Name: "render-one-costly", Tenants: tenantsN("one", 1), Stages: []wire.StageRequest{{Name: "s", Kind: "noop",
		Params: map[string]any{"x": `{{range 100000}}{{$_ := printf "%01000000d" 0}}{{end}}`}}}})
	require.NoError(t, err)
	a := exchange(t, p, http.MethodPost, "/v1/plans?dryRun=true", "application/json", body)
	t.Logf("one tenant's costly template: %d in %s", a.status, a.took.Round(time.Millisecond))
	prob := requireProblem(t, a, http.StatusBadRequest, wire.ProblemInvalidInput)
	assert.Equal(t, "stages[0].params.x", prob.Field)
	w.finish(t, "one tenant's costly template")
}

// listPlans asks GET /v1/plans once: its status, its body's size and the plans it lists. It
// does not touch t: it runs on any goroutine.
func listPlans(p *executorProc) (int, int, []wire.Plan, error) {
	client := &http.Client{Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Get(p.URL() + "/v1/plans")
	if err != nil {
		return 0, 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, len(b), nil, err
	}
	var list wire.PlanList
	if resp.StatusCode == http.StatusOK {
		err = json.Unmarshal(b, &list)
	}
	return resp.StatusCode, len(b), list.Plans, err
}

// A plan of 64 labels of 450 KiB each (a 29 MB body, under --max-body-bytes) is refused with a
// 400 naming the labels; nothing is kept, so 8 GET /v1/plans at once answer small, and the
// executor's resident set stays bounded.
func TestAttackHugeLabelsAreRefused(t *testing.T) {
	t.Parallel()
	p := startUnderLimit(t, "labels")
	w := watchAttack(t, p)
	labels := make(map[string]string, 64)
	value := strings.Repeat("v", 450<<10)
	for i := range 64 {
		labels[fmt.Sprintf("team-%02d", i)] = value
	}
	body, err := json.Marshal(wire.PlanRequest{Name: "labelled", Labels: labels, Tenants: tenantsN("lbl", 1),
		Stages: []wire.StageRequest{{Name: "s", Kind: "noop"}}})
	require.NoError(t, err)
	a := exchange(t, p, http.MethodPost, "/v1/plans", "application/json", body)
	t.Logf("64 labels × 450 KiB (a %d-byte body): %d in %s", len(body), a.status, a.took.Round(time.Millisecond))
	prob := requireProblem(t, a, http.StatusBadRequest, wire.ProblemInvalidInput)
	assert.True(t, prob.Field == "labels" || strings.HasPrefix(prob.Field, "labels."), "the problem names the labels: %q", prob.Field)

	type listing struct {
		status, size int
		plans        []wire.Plan
		err          error
	}
	listings := make([]listing, 8)
	parallel(len(listings), func(i int) {
		l := &listings[i]
		l.status, l.size, l.plans, l.err = listPlans(p)
	})
	for i, l := range listings {
		require.NoError(t, l.err, "listing %d", i)
		assert.Equal(t, http.StatusOK, l.status, "listing %d", i)
		assert.Less(t, l.size, 4<<10, "listing %d: its answer's size", i)
		assert.Empty(t, l.plans, "listing %d: the refused plan was not kept", i)
	}
	w.finish(t, "huge labels")
}

// outputTasks waits for a plan to end and returns it with its tasks.
func outputTasks(t *testing.T, p *executorProc, planID string) (wire.Plan, []wire.Task) {
	t.Helper()
	r := p.cli(t, "plan", "show", planID, "--watch", "-o", "json") // exits non-zero for a FAILED plan
	require.NotEmpty(t, r.stdout, "%s", r)
	return decode[wire.Plan](t, r.stdout), tasksOf(t, p, planID)
}

// A plan of 400 tenants whose http stage's target answers 1 MiB of JSON (within the kind's
// 1 MiB response cap), on an executor with the default --max-output-bytes (256 KiB): every
// stage fails permanently, its error naming the flag, nothing of the outputs is kept, and the
// executor's resident set stays bounded.
func TestAttackLargeHTTPOutputsAreBoundedPerStage(t *testing.T) {
	t.Parallel()
	const tenants = 400
	large := []byte(`{"blob":"` + strings.Repeat("a", 1<<20-11) + `"}`)
	require.Len(t, large, 1<<20)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(large)
	}))
	t.Cleanup(target.Close)
	p := startUnderLimit(t, "http-outputs", "--workers", "64")
	w := watchAttack(t, p)
	plan := submitJSON(t, p, wire.PlanRequest{Name: "large-http", MaxConcurrency: 64, Tenants: tenantsN("oh", tenants),
		Stages: []wire.StageRequest{{Name: "fetch", Kind: "http", Retry: &wire.RetryRequest{MaxAttempts: 1},
			Params: map[string]any{"method": "GET", "url": target.URL + "/{{.TenantID}}"}}}})

	pl, tasks := outputTasks(t, p, plan.PlanID)
	assert.Equal(t, "FAILED", pl.Status)
	require.Len(t, tasks, tenants)
	for _, tk := range tasks {
		if assert.Equal(t, "FAILED", tk.Status, tk.TenantID) && assert.Len(t, tk.Attempts, 1, tk.TenantID) {
			at := tk.Attempts[0]
			assert.Equal(t, "permanent", at.Class, tk.TenantID)
			assert.Contains(t, at.Error, "--max-output-bytes", tk.TenantID)
		}
	}
	w.finish(t, "large http outputs")
}

// A plan of 400 tenants of three exec stages, each printing 100 KiB of JSON as its last line
// (cat of a file), on an executor with --max-output-bytes 128 KiB and --max-task-output-bytes
// 256 KiB: stages a and b succeed, their outputs kept; stage c would take the task's outputs to
// 300 KiB and fails permanently, its error naming the task's flag. The executor keeps at most
// 256 KiB of outputs per task, and its resident set stays bounded.
func TestAttackLargeExecOutputsAreBoundedPerTask(t *testing.T) {
	t.Parallel()
	const tenants = 400
	cat, err := exec.LookPath("cat")
	require.NoError(t, err, "the exec stages print their output with cat: install coreutils")
	cat, err = filepath.Abs(cat)
	require.NoError(t, err)
	blob := filepath.Join(t.TempDir(), "output.json")
	require.NoError(t, os.WriteFile(blob, []byte(`{"blob":"`+strings.Repeat("b", 100<<10)+"\"}\n"), 0o600))
	p := startUnderLimit(t, "exec-outputs", "--exec-allow", cat, "--workers", "64",
		"--max-output-bytes", "131072", "--max-task-output-bytes", "262144")
	w := watchAttack(t, p)
	stage := func(name string) wire.StageRequest {
		return wire.StageRequest{Name: name, Kind: "exec", Retry: &wire.RetryRequest{MaxAttempts: 1},
			Params: map[string]any{"command": cat, "args": []any{blob}}}
	}
	plan := submitJSON(t, p, wire.PlanRequest{Name: "large-exec", MaxConcurrency: 64, Tenants: tenantsN("ox", tenants),
		Stages: []wire.StageRequest{stage("a"), stage("b"), stage("c")}})

	pl, tasks := outputTasks(t, p, plan.PlanID)
	assert.Equal(t, "FAILED", pl.Status)
	require.Len(t, tasks, tenants)
	lost := map[string][]string{} // tenant → the stages that succeeded without their output
	for _, tk := range tasks {
		if tk.Status != "FAILED" {
			lost[tk.TenantID] = lostOutputs(t, p, tk.TenantID)
		}
		if assert.Equal(t, "FAILED", tk.Status, "%s: outputs kept %v", tk.TenantID, lost[tk.TenantID]) && assert.Len(t, tk.Attempts, 3, tk.TenantID) {
			assert.Equal(t, "succeeded", tk.Attempts[0].Outcome, "%s: stage a", tk.TenantID)
			assert.Equal(t, "succeeded", tk.Attempts[1].Outcome, "%s: stage b", tk.TenantID)
			assert.Equal(t, "c", tk.Attempts[2].Stage, tk.TenantID)
			assert.Equal(t, "permanent", tk.Attempts[2].Class, "%s: stage c", tk.TenantID)
			assert.Contains(t, tk.Attempts[2].Error, "--max-task-output-bytes", "%s: stage c", tk.TenantID)
		}
	}
	assert.Empty(t, lost, "tasks that completed because stages succeeded with their output (cat's JSON last line) lost: tenant → those stages")
	w.finish(t, "large exec outputs")
}

// lostOutputs returns the stages of tenant's checkpoint that completed with a null output.
func lostOutputs(t *testing.T, p *executorProc, tenant string) []string {
	t.Helper()
	resp, err := http.Get(p.URL() + "/v1/tenants/" + tenant + "/checkpoint")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var cp wire.Checkpoint
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&cp))
	var lost []string
	for _, st := range cp.CompletedStages {
		if out := cp.ContextData[st]; len(out) == 0 || string(out) == "null" {
			lost = append(lost, st)
		}
	}
	return lost
}

// subscription is what one GET /v1/events got.
type subscription struct {
	from       string
	status     int
	retryAfter string
	problem    wire.Problem
	conn       net.Conn // the open stream (200), closed by the test
	err        error
}

// subscribe opens GET /v1/events on p from the local address ip and reads the answer's head:
// a 200's stream is left open on conn; a refusal's problem is read and its connection closed.
// It does not touch t: it runs on any goroutine.
func subscribe(p *executorProc, ip string) subscription {
	s := subscription{from: ip}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	conn, err := d.Dial("tcp", p.addr)
	if err != nil {
		s.err = err
		return s
	}
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := fmt.Fprintf(conn, "GET /v1/events HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", p.addr); err != nil {
		s.err = err
		_ = conn.Close()
		return s
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		s.err = err
		_ = conn.Close()
		return s
	}
	s.status, s.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
	if resp.StatusCode == http.StatusOK {
		_ = conn.SetDeadline(time.Time{})
		s.conn = conn
		return s
	}
	defer conn.Close()
	if resp.Header.Get("Content-Type") != wire.ProblemContentType {
		s.err = fmt.Errorf("a %d answered as %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		return s
	}
	s.err = json.NewDecoder(resp.Body).Decode(&s.problem)
	return s
}

// subscribeAll opens a subscription from each of ips, 64 at a time.
func subscribeAll(p *executorProc, ips []string) []subscription {
	out := make([]subscription, len(ips))
	next := make(chan int)
	go func() {
		for i := range ips {
			next <- i
		}
		close(next)
	}()
	parallel(64, func(int) {
		for i := range next {
			out[i] = subscribe(p, ips[i])
		}
	})
	return out
}

// 2,000 subscribers to GET /v1/events: from one address, 32 streams open
// (--max-event-streams-per-client's default) and the next are refused; from a hundred
// addresses, 512 streams open in all (--max-event-streams's default) and the rest are refused.
// Each refusal is a 429 busy problem with Retry-After: 5. The executor answers GET /healthz
// throughout, its resident set stays bounded, and once the streams close a new one is
// accepted again.
func TestAttackEventStreamFloodIsCapped(t *testing.T) {
	t.Parallel()
	const (
		subscribers = 2000
		maxStreams  = 512 // --max-event-streams's default
		perClient   = 32  // --max-event-streams-per-client's default
		fromOne     = 40  // subscribers from 127.0.0.1, over perClient
		perOther    = 20  // subscribers from each other address, under perClient
	)
	p := startUnderLimit(t, "events")
	w := watchAttack(t, p)
	var all []subscription
	t.Cleanup(func() {
		for _, s := range all {
			if s.conn != nil {
				_ = s.conn.Close()
			}
		}
	})
	count := func(subs []subscription, status int) int {
		n := 0
		for _, s := range subs {
			if s.status == status {
				n++
			}
		}
		return n
	}
	check := func(subs []subscription) {
		t.Helper()
		for _, s := range subs {
			require.NoError(t, s.err, "GET /v1/events from %s", s.from)
			if s.status == http.StatusOK {
				continue
			}
			require.Equal(t, http.StatusTooManyRequests, s.status, "GET /v1/events from %s", s.from)
			assert.Equal(t, wire.ProblemBusy, s.problem.Type, "from %s", s.from)
			assert.Equal(t, http.StatusTooManyRequests, s.problem.Status, "from %s", s.from)
			assert.Equal(t, "5", s.retryAfter, "from %s", s.from)
		}
	}

	one := make([]string, fromOne)
	for i := range one {
		one[i] = "127.0.0.1"
	}
	first := subscribeAll(p, one)
	all = append(all, first...)
	check(first)
	assert.Equal(t, perClient, count(first, http.StatusOK), "streams open from one address")
	assert.Equal(t, fromOne-perClient, count(first, http.StatusTooManyRequests), "refused from one address")

	var others []string
	for i := 0; len(others) < subscribers-fromOne; i++ {
		for range perOther {
			others = append(others, fmt.Sprintf("127.0.%d.%d", 1+i/250, 1+i%250))
		}
	}
	rest := subscribeAll(p, others)
	all = append(all, rest...)
	check(rest)
	open := count(all, http.StatusOK)
	t.Logf("%d subscribers: %d streams open, %d refused with 429", len(all), open, count(all, http.StatusTooManyRequests))
	assert.Equal(t, maxStreams, open, "streams open in all")
	assert.Equal(t, subscribers-maxStreams, count(all, http.StatusTooManyRequests), "refused in all")
	hwm := w.finish(t, "event-stream flood")

	for _, s := range all {
		if s.conn != nil {
			require.NoError(t, s.conn.Close())
		}
	}
	var again subscription
	deadline := time.Now().Add(10 * time.Second)
	for {
		again = subscribe(p, "127.0.0.1")
		if again.conn != nil {
			_ = again.conn.Close()
			break
		}
		require.True(t, time.Now().Before(deadline), "no stream accepted after the others closed: %d %v %+v", again.status, again.err, again.problem)
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("a stream is accepted again once the others closed (VmHWM %s)", mb(hwm))
}
