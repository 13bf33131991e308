package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/infra/promtest"
	"github.com/executor-dev/executor/server/servertest"
)

// errorRateQuery is the ring analysis' query as submitted: the worst error ratio of the
// ring's tenants (the console shows it unrendered, in the item's title).
const errorRateQuery = `max(tenant_error_ratio{wave="{{.Params.wave}}"})`

// analysisItem is the JavaScript expression of ring 0's one analysis item in the rings panel.
const analysisItem = `document.querySelector('[data-testid=rings] [data-testid=ring-row][data-index="0"] [data-testid=ring-analysis-item][data-name=error-rate]')`

// analysedRingsYAML is a plan of tenants in waves "first" (1 tenant, baked 60 s under the
// error-rate analysis of prom, every second, no failure tolerated) and "rest".
func analysedRingsYAML(prom *promtest.Server, tenants ...string) string {
	yaml := "name: analysed\nmaxConcurrency: 4\nwaves:\n" +
		"  - name: first\n    size: 1\n    bake: 60s\n    analysis:\n" +
		"      - name: error-rate\n        address: " + prom.URL() + "\n" +
		"        query: '" + errorRateQuery + "'\n" +
		"        successCondition: result < 0.01\n        interval: 1s\n        failureLimit: 0\n" +
		"  - {name: rest, size: rest}\n" +
		"stages:\n  - {name: push, kind: noop}\n  - {name: check, kind: noop}\ntenants:\n"
	for _, tn := range tenants {
		yaml += "  - id: " + tn + "\n"
	}
	return yaml
}

// The rings panel's Analysis column in a real headless Chromium, against a real Prometheus
// scraping an exporter the test sets: a plan of 4 tenants in rings "first" (1 tenant, baked
// 60 s under an error-rate analysis measured every second) and "rest". While the tenant's
// error ratio is 0.001 the panel shows ring 0 baking, its analysis counting successful
// measurements with the latest value, the query in the item's title, and "—" for the rest's
// analysis. Once the ratio is 0.5 the ring halts mid-bake: the item turns failed and the
// halt's reason names the analysis, the query, the value and the condition. Reject, confirmed,
// cancels the rest and the plan ends CANCELLED (the reason then says "rejected by an
// operator"; the item stays failed).
func TestConsoleRingsShowAnalysisInChromium(t *testing.T) {
	t.Parallel()
	exp := promtest.StartExporter(t)
	series := map[string]string{"tenant": "analysed-a", "wave": "first"}
	exp.Set("tenant_error_ratio", series, 0.001)
	prom := promtest.Start(t, exp.Addr())
	first := `max(tenant_error_ratio{wave="first"})`
	// Measured at the bake's start: a series Prometheus has not scraped yet would be inconclusive.
	prom.WaitValue(t, first, func(v float64) bool { return v == 0.001 }, 30*time.Second)
	srv := servertest.Start(t)
	c := client.New(srv.URL(), "", nil)
	rest := []string{"analysed-b", "analysed-c", "analysed-d"}
	planID := submitYAML(t, c, analysedRingsYAML(prom, append([]string{"analysed-a"}, rest...)...))
	ctx := browser(t)

	do(t, ctx, "open the plan", chromedp.Navigate(srv.URL()+"/#/plans/"+planID))
	do(t, ctx, "record dialogs", chromedp.Evaluate[bool](recordConfirms))
	waitJS(t, ctx, "ring 0 baking, measured healthy twice", ringRow(0)+`?.dataset.state === 'baking' && `+
		`(i => i?.dataset.verdict === 'successful' && /^error-rate: ([2-9]|\d\d+) ok · 0 failed · 0 inconclusive · latest 0\.001 \(successful, /.test(i.textContent))(`+analysisItem+`)`)
	assert.Equal(t, "—", do(t, ctx, "the rest's analysis", chromedp.Evaluate[string](ringRow(1)+`.querySelector('[data-testid=ring-analysis]').textContent`)))
	assert.Zero(t, do(t, ctx, "no item for the rest", chromedp.Evaluate[int](ringRow(1)+`.querySelectorAll('[data-testid=ring-analysis-item]').length`)))
	title := do(t, ctx, "the item's title", chromedp.Evaluate[string](analysisItem+`.title`))
	assert.Contains(t, title, `max(tenant_error_ratio{wave="first"})`, "the query as it runs: rendered for the ring")
	assert.Contains(t, title, "every 1s; failure limit 0, inconclusive limit 0")
	assert.Equal(t, []string{"Analysis"}, do(t, ctx, "the column's head", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('[data-testid=rings-table] thead th')].slice(-1).map(th => th.textContent)`)))

	// The tenant's error ratio rises: the ring halts long before its bake of 60 s runs out.
	exp.Set("tenant_error_ratio", series, 0.5)
	prom.WaitValue(t, first, func(v float64) bool { return v == 0.5 }, 30*time.Second)
	waitJS(t, ctx, "ring 0 halted by its analysis", ringRow(0)+`?.dataset.state === 'halted' && `+
		`document.querySelector('[data-testid=rings]').dataset.halted === 'true' && !!document.querySelector('#rings-reject') && `+
		`(i => i?.dataset.verdict === 'failed' && / · 1 failed · 0 inconclusive · latest 0\.5 \(failed, /.test(i.textContent))(`+analysisItem+`)`)
	reason := do(t, ctx, "the reason", chromedp.Evaluate[string](`document.querySelector('[data-testid=rings-halted-reason]').textContent`))
	for _, want := range []string{"ring 0 (first)", "analysis error-rate", "query " + first, "value 0.5", "result < 0.01"} {
		assert.Contains(t, reason, want)
	}
	assert.Contains(t, do(t, ctx, "the item's title", chromedp.Evaluate[string](analysisItem+`.title`)),
		"\nlatest: successCondition `result < 0.01` did not hold", "the latest measurement's message")
	assert.Equal(t, "pending", do(t, ctx, "ring 1 pending", chromedp.Evaluate[string](ringRow(1)+`.dataset.state`)))

	do(t, ctx, "reject", chromedp.Click(chromedp.ID("rings-reject")))
	waitJS(t, ctx, "the plan ended", `document.querySelector('#plan-head [data-testid=plan-status]')?.textContent.trim() === 'CANCELLED'`)
	waitJS(t, ctx, "ring 0 rejected", ringRow(0)+`?.dataset.state === 'rejected' && !document.querySelector('#rings-approve, #rings-reject')`)
	assert.Equal(t, "failed", do(t, ctx, "the item still failed", chromedp.Evaluate[string](analysisItem+`.dataset.verdict`)))
	assert.Equal(t, "rejected by an operator", do(t, ctx, "the reason now", chromedp.Evaluate[string](`document.querySelector('[data-testid=rings-halted-reason]').textContent`)))
	confirms := do(t, ctx, "the confirmations", chromedp.Evaluate[[]string](`window.confirms`))
	require.Len(t, confirms, 1)
	assert.Contains(t, confirms[0], "cancel the 3 tenant(s) not started")

	requireRejectedPlan(t, c, planID, rest)
	assert.Empty(t, do(t, ctx, "no error shown", chromedp.Evaluate[string](`document.querySelector('#banner').hidden ? '' : document.querySelector('#banner-text').textContent`)))
	require.True(t, do(t, ctx, "no reload", chromedp.Evaluate[bool](`window.sameDocument === true`)))
}

// requireRejectedPlan checks through the API that the plan ended rejected at ring 0: its
// analysis failed once (nothing was measured after the halt, when each measurement would
// fail), the first ring's tenant completed, the
// rest's tenants cancelled.
func requireRejectedPlan(t *testing.T, c *client.Client, planID string, rest []string) {
	t.Helper()
	p, err := c.Plan(context.Background(), planID, 0)
	require.NoError(t, err)
	assert.Equal(t, "CANCELLED", p.Status)
	assert.Equal(t, 3, p.Progress["CANCELLED"], "the rest cancelled")
	require.NotNil(t, p.Rings)
	require.NotNil(t, p.Rings.Halted)
	assert.Equal(t, "rejected by an operator", p.Rings.Halted.Reason, "a rejected ring's reason says so, not why it halted")
	assert.Equal(t, "rejected", p.Rings.Waves[0].State)
	require.Len(t, p.Rings.Waves[0].Analysis, 1)
	an := p.Rings.Waves[0].Analysis[0]
	assert.Equal(t, 1, an.Failed)
	assert.GreaterOrEqual(t, an.Successful, 2)
	assert.Equal(t, "COMPLETED", tenantStatus(t, c, "analysed-a"))
	for _, tn := range rest {
		assert.Equal(t, "CANCELLED", tenantStatus(t, c, tn), fmt.Sprintf("%s of the rest", tn))
	}
}
