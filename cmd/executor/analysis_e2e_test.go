package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/promtest"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/wire"
)

// The analyses of issue 34 against a real Prometheus (scraping every second an exporter the
// test sets) and real executors sharing a real Redis.

// errorRatio is the metric the exporter serves per tenant and wave.
const errorRatio = "tenant_error_ratio"

// analysisRig is what the ring analysis tests share: an exporter, a Prometheus scraping it,
// a deployment target and a Redis.
func analysisRig(t *testing.T) (*promtest.Exporter, *promtest.Server, *ringTarget, *redistest.Server) {
	t.Helper()
	exp := promtest.StartExporter(t)
	return exp, promtest.Start(t, exp.Addr()), newRingTarget(t), redistest.Start(t)
}

// submitPlan posts req to p and returns the plan created.
func submitPlan(t *testing.T, p *executorProc, req wire.PlanRequest) wire.Plan {
	t.Helper()
	body, err := json.Marshal(req)
	require.NoError(t, err)
	resp, err := http.Post(p.URL()+"/v1/plans", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	var out wire.Plan
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out
}

// ringAnalysis is a wave's analysis: the worst error ratio of the wave's tenants under 1 %,
// measured every second.
func ringAnalysis(prom *promtest.Server, failureLimit int) []map[string]any {
	return []map[string]any{{
		"name": "error-rate", "address": prom.URL(),
		"query":            fmt.Sprintf(`max(%s{wave="{{.Params.wave}}"})`, errorRatio),
		"successCondition": "result < 0.01", "interval": "1s", "failureLimit": failureLimit,
	}}
}

// analysedRollout is three rings of two tenants (an-000, an-001 | an-002, an-003 | the rest),
// each tenant's error ratio set healthy on the exporter under its wave's name; the first two
// rings bake with the analysis.
func analysedRollout(t *testing.T, exp *promtest.Exporter, prom *promtest.Server, rt *ringTarget, bake string) wire.PlanRequest {
	t.Helper()
	waves := []string{"first", "first", "second", "second", "third", "third"}
	for i, w := range waves {
		exp.Set(errorRatio, map[string]string{"tenant": fmt.Sprintf("an-%03d", i), "wave": w}, 0.001)
	}
	prom.WaitValue(t, fmt.Sprintf(`count(%s)`, errorRatio), func(v float64) bool { return v == float64(len(waves)) }, 30*time.Second)
	return wire.PlanRequest{
		Name: "analysed", MaxConcurrency: 2,
		Stages: []wire.StageRequest{{Name: "deploy", Kind: "http", Retry: &wire.RetryRequest{MaxAttempts: 1},
			Params: map[string]any{"url": rt.srv.URL + "/{{.TenantID}}"}}},
		Tenants: tenantsN("an", len(waves)),
		Waves: []wire.WaveRequest{
			{Name: "first", Size: 2, Bake: bake, Analysis: ringAnalysis(prom, 0)},
			{Name: "second", Size: 2, Bake: bake, Analysis: ringAnalysis(prom, 0)},
			{Name: "third", Size: "rest"},
		},
	}
}

// A 3-ring plan whose rings bake under an analysis of the tenants' error ratio completes while
// the exporter reports them healthy; each analysed ring measured its bake from its start to
// its end.
func TestRingAnalysisPassesAHealthyRollout(t *testing.T) {
	t.Parallel()
	exp, prom, rt, rs := analysisRig(t)
	a := startExecutor(t, "A", rs.URL(), "--name", "exec-a")

	p := submitPlan(t, a, analysedRollout(t, exp, prom, rt, "3s"))
	done := watchPlan(t, a, p.PlanID)
	require.Equal(t, "COMPLETED", done.Status)
	for k, w := range done.Rings.Waves[:2] {
		require.Len(t, w.Analysis, 1, w.Name)
		an := w.Analysis[0]
		if k == 1 { // the plan keeps the latest bake's measurements
			assert.GreaterOrEqual(t, an.Successful, 3, "at its start, every second, at its end")
			assert.Zero(t, an.Failed)
			require.NotEmpty(t, an.Measurements)
			last := an.Measurements[len(an.Measurements)-1]
			assert.Equal(t, "successful", last.Verdict)
			assert.Equal(t, "0.001", last.Value)
		}
	}
	_, _, n := rt.span(tenantNames2("an", 0, 6))
	assert.Equal(t, 6, n, "every tenant deployed once")
}

// tenantNames2 are <prefix>-<from> … <prefix>-<to-1>.
func tenantNames2(prefix string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s-%03d", prefix, i))
	}
	return out
}

// When one tenant's error ratio rises while its ring bakes, the ring halts at the next
// measurement (at most one measurement after Prometheus saw the value passes), long before the
// bake ends; no tenant of the next ring is called; the halt names the analysis, the query, the
// value and the condition; an approval lets the next ring start, as after a failed check.
func TestRingAnalysisHaltsTheRingMidBake(t *testing.T) {
	t.Parallel()
	exp, prom, rt, rs := analysisRig(t)
	a := startExecutor(t, "A", rs.URL(), "--name", "exec-a")

	p := submitPlan(t, a, analysedRollout(t, exp, prom, rt, "2m"))
	var baking wire.Plan
	require.Eventually(t, func() bool {
		got, ok := getPlan(t, a, p.PlanID)
		baking = got
		return ok && got.Rings.Waves[0].State == "baking" && len(got.Rings.Waves[0].Analysis) == 1 &&
			got.Rings.Waves[0].Analysis[0].Successful >= 2
	}, pollTimeout, 50*time.Millisecond, "the first ring bakes, measured healthy")

	exp.Set(errorRatio, map[string]string{"tenant": "an-001", "wave": "first"}, 0.5)
	prom.WaitValue(t, fmt.Sprintf(`max(%s{wave="first"})`, errorRatio), func(v float64) bool { return v == 0.5 }, 30*time.Second)
	seen, err := getPlanOK(t, a, p.PlanID)
	require.NoError(t, err)
	passedBefore := seen.Rings.Waves[0].Analysis[0].Successful

	var halted wire.Plan
	require.Eventually(t, func() bool {
		got, ok := getPlan(t, a, p.PlanID)
		halted = got
		return ok && got.Rings.Halted != nil
	}, pollTimeout, 50*time.Millisecond, "the ring halts")
	an := halted.Rings.Waves[0].Analysis[0]
	assert.LessOrEqual(t, an.Successful-passedBefore, 1, "halted at the next measurement once Prometheus saw the value")
	assert.Equal(t, 1, an.Failed)
	assert.True(t, time.Now().Before(*baking.Rings.Waves[0].BakeEndsAt), "before the bake ran out")
	reason := halted.Rings.Halted.Reason
	for _, want := range []string{"analysis error-rate", `max(tenant_error_ratio{wave="first"})`, "value 0.5", "result < 0.01"} {
		assert.Contains(t, reason, want)
	}
	assert.Equal(t, "halted", halted.Rings.Waves[0].State)
	last := an.Measurements[len(an.Measurements)-1]
	assert.Equal(t, "failed", last.Verdict)

	time.Sleep(2 * time.Second) // measurements would have gone on every second
	after, err := getPlanOK(t, a, p.PlanID)
	require.NoError(t, err)
	assert.Equal(t, an.Failed+an.Successful+an.Inconclusive, after.Rings.Waves[0].Analysis[0].Failed+
		after.Rings.Waves[0].Analysis[0].Successful+after.Rings.Waves[0].Analysis[0].Inconclusive, "no measurement once halted")
	_, _, n := rt.span(tenantNames2("an", 2, 6))
	require.Zero(t, n, "no tenant of the next rings called")

	requireExit(t, 0, a.cli(t, "plan", "approve", p.PlanID))
	require.Eventually(t, func() bool {
		_, _, n := rt.span(tenantNames2("an", 2, 4))
		return n == 2
	}, pollTimeout, 50*time.Millisecond, "approved: the second ring runs")
	requireExit(t, 0, a.cli(t, "plan", "reject", p.PlanID))
}

// getPlanOK reads a plan through p, failing on an error answer.
func getPlanOK(t *testing.T, p *executorProc, id string) (wire.Plan, error) {
	t.Helper()
	got, ok := getPlan(t, p, id)
	if !ok {
		return got, fmt.Errorf("GET plan %s failed", id)
	}
	return got, nil
}

// Two executors share Redis; the one measuring a ring's analysis is killed (kill -9) mid-bake:
// the other measures on at the recorded schedule and the plan completes.
func TestRingAnalysisSurvivesTheMeasurerKilled(t *testing.T) {
	t.Parallel()
	exp, prom, rt, rs := analysisRig(t)
	execs := map[string]*executorProc{
		"exec-a": startExecutor(t, "A", rs.URL(), "--name", "exec-a"),
		"exec-b": startExecutor(t, "B", rs.URL(), "--name", "exec-b"),
	}
	p := submitPlan(t, execs["exec-a"], analysedRollout(t, exp, prom, rt, "8s"))

	measurer := ""
	require.Eventually(t, func() bool {
		for name, e := range execs {
			if strings.Contains(e.output.String(), `"msg":"rollout: measured"`) {
				measurer = name
				return true
			}
		}
		return false
	}, pollTimeout, 10*time.Millisecond, "an executor measured the first ring's analysis")
	execs[measurer].kill(t)
	delete(execs, measurer)
	var survivor *executorProc
	for _, e := range execs {
		survivor = e
	}
	before, err := getPlanOK(t, survivor, p.PlanID)
	require.NoError(t, err)
	require.Equal(t, "baking", before.Rings.Waves[0].State, "killed mid-bake")
	measuredBefore := before.Rings.Waves[0].Analysis[0].Successful

	// The first ring's measurements go on through the survivor until its bake ends.
	var first wire.AnalysisView
	require.Eventually(t, func() bool {
		got, ok := getPlan(t, survivor, p.PlanID)
		if ok && got.Rings.Current == 0 {
			first = got.Rings.Waves[0].Analysis[0]
		}
		return ok && got.Rings.Current > 0
	}, pollTimeout, 20*time.Millisecond, "the survivor ends the first ring's bake")
	assert.Greater(t, first.Successful, measuredBefore+2, "measured on after the kill")
	assert.Contains(t, survivor.output.String(), `"msg":"rollout: measured"`)
	done := watchPlan(t, survivor, p.PlanID)
	require.Equal(t, "COMPLETED", done.Status)
	second := done.Rings.Waves[1].Analysis[0]
	assert.GreaterOrEqual(t, second.Successful, 8, "the second ring measured every second of its 8 s bake")
	assert.Zero(t, second.Failed+second.Inconclusive)
	t.Logf("killed %s after %d measurements of the first ring; %d in all", measurer, measuredBefore, first.Successful)
}

// A prometheus stage per tenant, after the deploy: tenants whose error ratio is bad fail with
// class analysis, the healthy ones complete, one without a series fails inconclusive
// (inconclusiveLimit 0) after its retries; the summary counts the analysis failures apart. A
// Prometheus that is down never passes a tenant: inconclusive, then failed after the retries.
func TestPrometheusStagePerTenant(t *testing.T) {
	t.Parallel()
	exp := promtest.StartExporter(t)
	prom := promtest.Start(t, exp.Addr())
	rs := redistest.Start(t)
	a := startExecutor(t, "A", rs.URL(), "--name", "exec-a")
	ratios := map[string]float64{"pt-000": 0.001, "pt-001": 0.002, "pt-002": 0.5, "pt-003": 0.004}
	for tn, v := range ratios {
		exp.Set(errorRatio, map[string]string{"tenant": tn, "wave": "none"}, v)
	}
	prom.WaitValue(t, "count("+errorRatio+")", func(v float64) bool { return v == 4 }, 30*time.Second)
	analysis := func(address string) wire.StageRequest {
		return wire.StageRequest{Name: "analysis", Kind: "prometheus",
			Retry: &wire.RetryRequest{MaxAttempts: 2, InitialBackoff: "100ms"},
			Params: map[string]any{
				"address": address, "query": errorRatio + `{tenant="{{.TenantID}}"}`,
				"successCondition": "result < 0.01", "failureCondition": "result >= 0.05",
				"interval": "1s", "count": 2, "inconclusiveLimit": 0,
			}}
	}
	req := wire.PlanRequest{
		Name: "per-tenant", MaxConcurrency: 5, FailureBudget: 10,
		Stages:  []wire.StageRequest{{Name: "deploy", Kind: "noop"}, analysis(prom.URL())},
		Tenants: tenantsN("pt", 5), // pt-004 has no series
	}
	dry := a.cli(t, "submit", "-f", writePlan(t, req), "--dry-run")
	requireExit(t, 1, dry) // a CI gate: pt-002's metric fails its condition now
	assert.Contains(t, dry.stderr, "1 analysis measurement(s) failed or could not query: tenant pt-002 stage analysis: 0.5")
	assert.NotContains(t, dry.stderr, "pt-004", "no sample yet is no failure")
	p := submitPlan(t, a, req)
	done := watchEnded(t, a, p.PlanID, 1)
	tasks := map[string]wire.Task{}
	for _, tk := range tasksOf(t, a, p.PlanID) {
		tasks[tk.TenantID] = tk
	}
	for _, tn := range []string{"pt-000", "pt-001", "pt-003"} {
		assert.Equal(t, "COMPLETED", tasks[tn].Status, tn)
	}
	require.Equal(t, "FAILED", tasks["pt-002"].Status)
	require.NotNil(t, tasks["pt-002"].LastError)
	assert.Equal(t, "analysis", tasks["pt-002"].LastError.Class)
	assert.Contains(t, tasks["pt-002"].LastError.Message, "value 0.5")
	assert.Equal(t, 1, tasks["pt-002"].Attempt, "an analysis failure is not retried")
	require.Equal(t, "FAILED", tasks["pt-004"].Status, "no series: inconclusive past inconclusiveLimit 0")
	assert.Equal(t, "retryable", tasks["pt-004"].LastError.Class)
	assert.Contains(t, tasks["pt-004"].LastError.Message, "analysis inconclusive")
	assert.Equal(t, "FAILED", done.Status)

	sum := decode[wire.PlanSummary](t, requireCLI(t, a, "plan", "summary", p.PlanID, "-o", "json"))
	classes := map[string]int{}
	for _, c := range sum.FailureClasses {
		classes[c.Class] = c.Count
	}
	assert.Equal(t, 1, classes["analysis"], "tenants failed by analysis, apart")
	assert.Equal(t, 1, classes["retryable"])

	prom.Stop()
	down := submitPlan(t, a, wire.PlanRequest{
		Name: "prometheus-down", Stages: []wire.StageRequest{analysis(prom.URL())}, Tenants: tenantsN("pd", 1),
	})
	gone := watchEnded(t, a, down.PlanID, 1)
	require.Equal(t, "FAILED", gone.Status, "never a success without Prometheus")
	tk := tasksOf(t, a, down.PlanID)[0]
	assert.Equal(t, "retryable", tk.LastError.Class)
	assert.Contains(t, tk.LastError.Message, "the query failed 3 times")
}

// requireCLI runs the CLI against p and returns its stdout, requiring exit 0.
func requireCLI(t *testing.T, p *executorProc, args ...string) string {
	t.Helper()
	r := p.cli(t, args...)
	requireExit(t, 0, r)
	return r.stdout
}

// watchEnded watches a plan until it ends (plan show --watch), requiring the CLI's exit code
// (1: it did not complete), and returns it.
func watchEnded(t *testing.T, p *executorProc, planID string, exit int) wire.Plan {
	t.Helper()
	r := p.cli(t, "plan", "show", planID, "--watch", "-o", "json")
	requireExit(t, exit, r)
	return decode[wire.Plan](t, r.stdout)
}

// examples/analysis/plan.yaml runs as its comment says: an executor, a Prometheus scraping it
// (on the test's ports, which the plan is pointed at), the canary ring analysed through its
// bake, each tenant verified; the plan completes.
func TestAnalysisExampleRuns(t *testing.T) {
	t.Parallel()
	a := startExecutor(t, "analysis", "")
	prom := promtest.Start(t, a.addr)
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "analysis", "plan.yaml"))
	require.NoError(t, err)
	text := strings.ReplaceAll(string(b), "http://127.0.0.1:9090", prom.URL())
	text = strings.ReplaceAll(text, `job="executor"`, `job="exporter"`) // promtest's job name
	require.NotEqual(t, string(b), text, "the example names the Prometheus it queries")
	file := filepath.Join(t.TempDir(), "plan.yaml")
	require.NoError(t, os.WriteFile(file, []byte(text), 0o644))

	dry := requireCLI(t, a, "submit", "-f", file, "--dry-run", "-o", "json")
	preview := decode[wire.DryRun](t, dry)
	require.Len(t, preview.Rings, 2)
	require.Len(t, preview.Rings[0].Analysis, 1, "the ring's analysis measured once")
	assert.Equal(t, "successful", preview.Rings[0].Analysis[0].Measurement.Verdict, preview.Rings[0].Analysis[0].Measurement.Message)
	require.NotNil(t, preview.Tenants[0].Stages[1].Measurement, "the verify stage measured once")
	assert.Equal(t, "1", preview.Tenants[0].Stages[1].Measurement.Value)
	table := requireCLI(t, a, "submit", "-f", file, "--dry-run")
	assert.Regexp(t, `ring 0 \(canary\) analysis not-degraded measured once: \S+ successful = 0 `, table)
	assert.Contains(t, table, "measured once: ", "the verify stages too")

	done := decode[wire.Plan](t, requireCLI(t, a, "submit", "-f", file, "--wait", "-o", "json"))
	require.Equal(t, "COMPLETED", done.Status)
	an := done.Rings.Waves[0].Analysis[0]
	assert.GreaterOrEqual(t, an.Successful, 2, "at the bake's start and end at least")
	assert.Zero(t, an.Failed+an.Inconclusive)
	shown := requireCLI(t, a, "plan", "show", done.PlanID)
	assert.Contains(t, shown, "analysis not-degraded every 2s")
}
