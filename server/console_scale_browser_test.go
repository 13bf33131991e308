package server_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// scaleTenants is how many tenants the scale test's plan rolls out to: the executor's default
// limit (app.DefaultMaxTenants).
const scaleTenants = 100_000

// transfer adds up, from the browser's own network events (CDP), the bytes the page received
// over the wire: headers and bodies, every request, finished or still streaming (the event
// stream).
type transfer struct {
	mu       sync.Mutex
	urls     map[network.RequestID]string
	headers  map[network.RequestID]float64 // the response's bytes when its headers came
	data     map[network.RequestID]int64   // the bytes of the body chunks since
	finished map[network.RequestID]float64 // the request's total, once it finished
}

func newTransfer() *transfer {
	return &transfer{
		urls: map[network.RequestID]string{}, headers: map[network.RequestID]float64{},
		data: map[network.RequestID]int64{}, finished: map[network.RequestID]float64{},
	}
}

// listen is the chromedp.Listen func: it runs in the tab's loop and only records.
func (tr *transfer) listen(ev any) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		tr.urls[e.RequestID] = e.Request.URL
	case *network.EventResponseReceived:
		tr.headers[e.RequestID] = e.Response.EncodedDataLength
	case *network.EventDataReceived:
		tr.data[e.RequestID] += e.EncodedDataLength
	case *network.EventLoadingFinished:
		tr.finished[e.RequestID] = e.EncodedDataLength
	}
}

// total is the bytes received so far, with each request's share (path and bytes) largest
// first.
func (tr *transfer) total() (float64, []string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	type share struct {
		url   string
		bytes float64
	}
	var shares []share
	sum := 0.0
	for id, u := range tr.urls {
		b := max(tr.finished[id], tr.headers[id]+float64(tr.data[id]))
		sum += b
		if p, err := url.Parse(u); err == nil {
			u = p.RequestURI()
		}
		shares = append(shares, share{u, b})
	}
	sort.Slice(shares, func(i, j int) bool { return shares[i].bytes > shares[j].bytes })
	out := make([]string, len(shares))
	for i, s := range shares {
		out[i] = fmt.Sprintf("%8.0f B  %s", s.bytes, s.url)
	}
	return sum, out
}

// viewportScreenshot saves what the window shows (not the whole page) like screenshot.
func viewportScreenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("CONSOLE_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	png := do(t, ctx, "screenshot "+name, chromedp.CaptureScreenshot())
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
}

// scaleSummary reads the plan's summary through the API.
func scaleSummary(t *testing.T, c *client.Client, planID string) wire.PlanSummary {
	t.Helper()
	var s wire.PlanSummary
	require.NoError(t, c.Call(context.Background(), "GET", "/v1/plans/"+planID+"/summary", nil, &s))
	return s
}

// scaleTotal is how many of the plan's tasks match the listing's query, through the API.
func scaleTotal(t *testing.T, c *client.Client, planID string, q url.Values) int {
	t.Helper()
	q.Set("limit", "1")
	var page wire.TaskList
	require.NoError(t, c.Call(context.Background(), "GET", "/v1/plans/"+planID+"/tasks?"+q.Encode(), nil, &page))
	return page.Total
}

// The plan page at 100,000 tenants, in a real headless Chromium: it opens on the summary and
// one page of tenants (under 500 KB over the wire, at most 300 table rows), its filters
// narrow the list, and "Approve all matching" approves exactly the 1,000 WAITING tenants of a
// filter, whose progress the page then follows without a reload.
//
// Not parallel: submitting and running 100,000 tasks keeps every CPU busy, and the other
// browser tests' waits would be measured against it.
func TestConsoleAtScaleInChromium(t *testing.T) {
	srv := servertest.Start(t)
	c := client.New(srv.URL(), "", nil)

	// A noop stage, an approval gate, a noop: every task stops WAITING at the gate.
	var b strings.Builder
	b.WriteString(`{"name":"scale","labels":{"team":"sre","size":"100k"},"maxConcurrency":1000,"stages":[` +
		`{"name":"prepare","kind":"noop"},` +
		`{"name":"gate","kind":"approval","params":{"message":"roll {{.TenantID}} out?"}},` +
		`{"name":"finish","kind":"noop"}],"tenants":[`)
	for i := range scaleTenants {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"t-%06d"}`, i)
	}
	b.WriteString(`]}`)
	start := time.Now()
	plan, _, err := c.SubmitPlan(context.Background(), []byte(b.String()), "application/json", "", false)
	require.NoError(t, err)
	planID := plan.PlanID
	t.Logf("submitted %d tenants (%d bytes) in %v", scaleTenants, b.Len(), time.Since(start).Round(time.Millisecond))
	start = time.Now()
	require.Eventually(t, func() bool {
		return scaleSummary(t, c, planID).Statuses["WAITING"] == scaleTenants
	}, 4*time.Minute, 250*time.Millisecond, "every task reaches the gate")
	t.Logf("all %d tasks WAITING after %v", scaleTenants, time.Since(start).Round(time.Millisecond))

	ctx := browser(t)
	do(t, ctx, "a taller window", chromedp.EmulateViewport(1280, 1400))
	tr := newTransfer()
	require.NoError(t, chromedp.Listen(ctx, tr.listen))

	// Open the plan page: the summary and the first page of tenants.
	do(t, ctx, "open the plan", chromedp.Navigate(srv.URL()+"/#/plans/"+planID))
	waitJS(t, ctx, "the first useful paint", `performance.getEntriesByName('executor:first-useful-paint').length > 0`)
	bytes, shares := tr.total()
	paint := do(t, ctx, "the first paint's time", chromedp.Evaluate[float64](`performance.getEntriesByName('executor:first-useful-paint')[0].startTime`))
	perfBytes := do(t, ctx, "the Performance API's count", chromedp.Evaluate[float64](
		`performance.getEntries().reduce((n, e) => n + (e.transferSize || 0), 0)`))
	rows := do(t, ctx, "the table rows", chromedp.Evaluate[int](`document.querySelectorAll('tr').length`))
	t.Logf("first useful paint %.0f ms after navigating; %.0f bytes transferred until then (Performance API: %.0f); %d table rows",
		paint, bytes, perfBytes, rows)
	t.Logf("requests:\n%s", strings.Join(shares, "\n"))
	timeline := do(t, ctx, "the resource timings", chromedp.Evaluate[[]string](`performance.getEntriesByType('resource').concat(performance.getEntriesByType('navigation'))`+
		`.map(e => Math.round(e.startTime) + '..' + Math.round(e.responseEnd) + ' ms  ' + new URL(e.name).pathname)`))
	t.Logf("timeline (start..end of each response):\n%s", strings.Join(timeline, "\n"))
	assert.Less(t, bytes, 500_000.0, "bytes transferred until the summary and the first page show")
	assert.LessOrEqual(t, rows, 300, "table rows in the DOM")

	// The summary counts them all; the list holds one page.
	do(t, ctx, "no dialogs", chromedp.Evaluate[bool](`(window.confirm = () => true, window.sameDocument = true)`))
	count := func(sel string) string {
		t.Helper()
		return do(t, ctx, sel, chromedp.Evaluate[string](`document.querySelector('`+sel+`')?.dataset.count ?? ''`))
	}
	assert.Equal(t, "100000", count(`[data-testid=summary-counts] [data-status=WAITING]`))
	assert.Equal(t, "100000", count(`[data-testid=matrix-cell][data-stage-index="1"][data-status=WAITING]`))
	assert.Equal(t, "0", count(`[data-testid=matrix-cell][data-stage-index="0"][data-status=PENDING]`))
	assert.Equal(t, "100000", count(`[data-testid=gate][data-stage=gate]`))
	assert.Equal(t, "100000", do(t, ctx, "the list's total", chromedp.Evaluate[string](`document.querySelector('#tasks-total').dataset.total`)))
	assert.Equal(t, 100, do(t, ctx, "one page of tenants", chromedp.Evaluate[int](`document.querySelectorAll('[data-testid=task-row]').length`)))
	assert.Equal(t, "t-000000", do(t, ctx, "in plan order", chromedp.Evaluate[string](`document.querySelector('[data-testid=task-row]').dataset.tenant`)))
	viewportScreenshot(t, ctx, "console-scale-summary")

	// A tenant prefix narrows the list: 100 tenants, t-000100..t-000199, one page.
	do(t, ctx, "type a tenant prefix", chromedp.SendKeys(chromedp.ID("filter-tenant"), "t-0001"))
	waitJS(t, ctx, "the prefix's total", `document.querySelector('#tasks-total')?.dataset.total === '100' && document.querySelector('#tasks').dataset.query === 'tenant=t-0001'`)
	tenants := do(t, ctx, "the rows", chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid=task-row]')].map(r => r.dataset.tenant)`))
	require.Len(t, tenants, 100)
	for _, id := range tenants {
		assert.True(t, strings.HasPrefix(id, "t-0001"), id)
	}
	assert.True(t, do(t, ctx, "no next page", chromedp.Evaluate[bool](`document.querySelector('#page-next').disabled`)))
	assert.Equal(t, "tenant=t-0001", do(t, ctx, "the filter in the address", chromedp.Evaluate[string](`location.hash.split('?')[1]`)))

	// A status filter: no tenant of the prefix is COMPLETED, every one WAITING.
	setSelect := func(id, value string) {
		t.Helper()
		do(t, ctx, "select "+id, chromedp.Evaluate[bool](fmt.Sprintf(
			`(s => (s.value = %q, s.dispatchEvent(new Event('change')), s.value === %q))(document.querySelector('#%s'))`, value, value, id)))
	}
	setSelect("filter-status", "COMPLETED")
	waitJS(t, ctx, "none COMPLETED", `document.querySelector('#tasks-total')?.dataset.total === '0' && !!document.querySelector('[data-testid=tasks-empty]')`)
	setSelect("filter-status", "WAITING")
	waitJS(t, ctx, "all WAITING", `document.querySelector('#tasks-total')?.dataset.total === '100' && document.querySelectorAll('[data-testid=task-row][data-status=WAITING]').length === 100`)
	// Sorted by tenant id, descending.
	setSelect("filter-sort", "-tenant")
	waitJS(t, ctx, "the last tenant first", `document.querySelector('[data-testid=task-row]')?.dataset.tenant === 't-000199'`)
	setSelect("filter-sort", "order")

	// The gate's WAITING tasks with the prefix t-000: 1,000 tenants, ten pages; "Next" and
	// "Previous" walk them.
	do(t, ctx, "clear the filters", chromedp.Click(chromedp.ID("filter-clear")))
	waitJS(t, ctx, "every tenant", `document.querySelector('#tasks')?.dataset.query === '' && document.querySelector('#tasks-total').dataset.total === '100000'`)
	do(t, ctx, "list the gate", chromedp.Click(chromedp.CSS(`[data-testid=gate-show][data-stage=gate]`)))
	waitJS(t, ctx, "the gate's tasks", `document.querySelector('#tasks')?.dataset.query === 'status=WAITING&stage=1' && document.querySelector('#tasks-total').dataset.total === '100000'`)
	do(t, ctx, "type the prefix t-000", chromedp.SendKeys(chromedp.ID("filter-tenant"), "t-000"))
	waitJS(t, ctx, "1,000 waiting", `document.querySelector('#tasks')?.dataset.query === 'status=WAITING&stage=1&tenant=t-000' && document.querySelector('#tasks-total').dataset.total === '1000'`)
	do(t, ctx, "next page", chromedp.Click(chromedp.ID("page-next")))
	waitJS(t, ctx, "the second page", `document.querySelector('#tasks').dataset.page === '2' && document.querySelector('[data-testid=task-row]')?.dataset.tenant === 't-000100'`)
	do(t, ctx, "previous page", chromedp.Click(chromedp.ID("page-prev")))
	waitJS(t, ctx, "the first page again", `document.querySelector('#tasks').dataset.page === '1' && document.querySelector('[data-testid=task-row]')?.dataset.tenant === 't-000000'`)
	rows = do(t, ctx, "the table rows", chromedp.Evaluate[int](`document.querySelectorAll('tr').length`))
	assert.LessOrEqual(t, rows, 300, "table rows in the DOM")
	do(t, ctx, "scroll to the list", chromedp.Evaluate[bool](`(document.querySelector('#tenants').scrollIntoView(), true)`))
	viewportScreenshot(t, ctx, "console-scale-filtered")

	// Approve all 1,000, confirmed with their count.
	do(t, ctx, "record confirmations", chromedp.Evaluate[bool](`(window.confirmed = [], window.confirm = (m) => (window.confirmed.push(m), true), true)`))
	do(t, ctx, "approve all matching", chromedp.Click(chromedp.ID("bulk-approve")))
	waitJS(t, ctx, "the bulk result", `document.querySelector('#bulk-result')?.dataset.applied === '1000'`)
	asked := do(t, ctx, "the confirmation", chromedp.Evaluate[[]string](`window.confirmed`))
	require.Len(t, asked, 1)
	assert.Contains(t, asked[0], "Approve 1,000 WAITING tasks at stage 1: gate")
	assert.Equal(t, []string{"approve", "1000", "1000", "0"}, do(t, ctx, "the answer shown", chromedp.Evaluate[[]string](
		`(d => [d.action, d.matched, d.applied, d.skipped])(document.querySelector('#bulk-result').dataset)`)))

	// Through the API: those 1,000 left the gate and complete; t-001000 still waits.
	assert.Zero(t, scaleTotal(t, c, planID, url.Values{"tenant": {"t-000"}, "status": {"WAITING"}}), "t-000000..t-000999 left WAITING")
	assert.Equal(t, "WAITING", tenantStatus(t, c, "t-001000"))
	require.Eventually(t, func() bool {
		return scaleTotal(t, c, planID, url.Values{"tenant": {"t-000"}, "status": {"COMPLETED"}}) == 1000
	}, time.Minute, 100*time.Millisecond, "the 1,000 approved complete")
	s := scaleSummary(t, c, planID)
	assert.Equal(t, 1000, s.Statuses["COMPLETED"])
	assert.Equal(t, scaleTenants-1000, s.Statuses["WAITING"])
	assert.Equal(t, "WAITING", tenantStatus(t, c, "t-001000"))

	// The page followed, without a reload: the counts, the gate, the emptied filter.
	waitJS(t, ctx, "the counts moved", `document.querySelector('[data-testid=summary-counts] [data-status=COMPLETED]')?.dataset.count === '1000' && `+
		`document.querySelector('[data-testid=summary-counts] [data-status=WAITING]')?.dataset.count === '99000'`)
	waitJS(t, ctx, "the gate's count", `document.querySelector('[data-testid=gate][data-stage=gate]')?.dataset.count === '99000'`)
	waitJS(t, ctx, "the matrix's done row", `document.querySelector('[data-testid=matrix-cell][data-stage-index="3"][data-status=COMPLETED]')?.dataset.count === '1000'`)
	waitJS(t, ctx, "nothing left waiting under the filter", `document.querySelector('#tasks-total')?.dataset.total === '0'`)
	require.True(t, do(t, ctx, "no reload", chromedp.Evaluate[bool](`window.sameDocument === true`)), "the console never reloaded the page")
	rows = do(t, ctx, "the table rows", chromedp.Evaluate[int](`document.querySelectorAll('tr').length`))
	assert.LessOrEqual(t, rows, 300, "table rows in the DOM")
	// The summary's COMPLETED count lists them (the tenant prefix stays).
	do(t, ctx, "list the completed ones", chromedp.Click(chromedp.CSS(`[data-testid=summary-counts] [data-status=COMPLETED]`)))
	waitJS(t, ctx, "1,000 completed", `document.querySelector('#tasks')?.dataset.query === 'status=COMPLETED&tenant=t-000' && `+
		`document.querySelector('#tasks-total').dataset.total === '1000' && document.querySelectorAll('[data-testid=task-row][data-status=COMPLETED]').length === 100`)
	do(t, ctx, "scroll to the top", chromedp.Evaluate[bool](`(window.scrollTo(0, 0), true)`))
	viewportScreenshot(t, ctx, "console-scale-approved")
}

// The other bulk actions in a real headless Chromium, on a small plan: "Reject all
// matching…" with a comment on the WAITING tenants of a prefix, the failure class it makes
// (with its sample) as a filter, "Retry matching" on that class, "Cancel matching" on the
// gate; and the plans list with the plan's labels and counts.
func TestConsoleBulkActionsInChromium(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	c := client.New(srv.URL(), "", nil)
	planID := submitYAML(t, c, "name: bulk\nlabels: {team: sre, change: CHG-7}\nmaxConcurrency: 4\nstages:\n"+
		"  - {name: prepare, kind: noop}\n"+
		"  - {name: gate, kind: approval, params: {message: \"ship it\"}}\n"+
		"  - {name: finish, kind: noop}\n"+
		"tenants:\n  - id: eu-1\n  - id: eu-2\n  - id: us-1\n  - id: us-2\n")
	ctx := browser(t)
	do(t, ctx, "open the plan", chromedp.Navigate(srv.URL()+"/#/plans/"+planID))
	do(t, ctx, "record confirmations", chromedp.Evaluate[bool](
		`(window.confirmed = [], window.confirm = (m) => (window.confirmed.push(m), true), window.sameDocument = true)`))
	lastConfirm := func() string {
		t.Helper()
		return do(t, ctx, "the confirmation", chromedp.Evaluate[string](`window.confirmed[window.confirmed.length - 1] || ''`))
	}
	waitJS(t, ctx, "the four at the gate", `document.querySelector('[data-testid=gate][data-stage=gate]')?.dataset.count === '4'`)

	// The gate's tenants of eu-: reject them, with a comment.
	do(t, ctx, "list the gate", chromedp.Click(chromedp.CSS(`[data-testid=gate-show][data-stage=gate]`)))
	waitJS(t, ctx, "the gate's tasks", `document.querySelector('#tasks')?.dataset.query === 'status=WAITING&stage=1' && document.querySelector('#tasks-total').dataset.total === '4'`)
	do(t, ctx, "type the prefix", chromedp.SendKeys(chromedp.ID("filter-tenant"), "eu-"))
	waitJS(t, ctx, "two of them", `document.querySelector('#tasks')?.dataset.query === 'status=WAITING&stage=1&tenant=eu-' && document.querySelector('#tasks-total').dataset.total === '2'`)
	do(t, ctx, "reject all matching", chromedp.Click(chromedp.ID("bulk-reject")))
	do(t, ctx, "the comment box", chromedp.WaitVisible(chromedp.ID("bulk-reject-comment")))
	do(t, ctx, "type the comment", chromedp.SendKeys(chromedp.ID("bulk-reject-comment"), "bad metrics in eu"))
	do(t, ctx, "confirm the rejection", chromedp.Click(chromedp.ID("bulk-reject-confirm")))
	waitJS(t, ctx, "the rejection's result", `(d => d.action === 'reject' && d.applied === '2' && d.skipped === '0')(document.querySelector('#bulk-result').dataset)`)
	assert.Equal(t, "Reject 2 WAITING tasks at stage 1: gate, whose tenant id starts with “eu-”? They fail at their gate, with your comment on each decision.", lastConfirm())
	for _, tenant := range []string{"eu-1", "eu-2"} {
		require.Eventually(t, func() bool { return tenantStatus(t, c, tenant) == "FAILED" }, 10*time.Second, 10*time.Millisecond, tenant)
		task, err := c.TenantTask(context.Background(), tenant)
		require.NoError(t, err)
		require.NotNil(t, task.Decision)
		assert.Equal(t, "bad metrics in eu", task.Decision.Comment)
	}
	assert.Equal(t, "WAITING", tenantStatus(t, c, "us-1"))
	assert.Equal(t, "WAITING", tenantStatus(t, c, "us-2"))

	// Their failure class, with a sample, lists them; "Retry matching" sends them back to the gate.
	waitJS(t, ctx, "the failure class", `document.querySelector('[data-testid=failure-class][data-class=permanent]')?.dataset.count === '2'`)
	assert.Contains(t, do(t, ctx, "its sample", chromedp.Evaluate[string](`document.querySelector('[data-testid=failure-class]').textContent`)), "rejected by an operator")
	do(t, ctx, "list the class", chromedp.Click(chromedp.CSS(`[data-testid=failure-class][data-class=permanent] button`)))
	waitJS(t, ctx, "the class's tasks", `document.querySelector('#tasks')?.dataset.query === 'class=permanent&tenant=eu-' && document.querySelector('#tasks-total').dataset.total === '2'`)
	assert.True(t, do(t, ctx, "no approve without a WAITING filter", chromedp.Evaluate[bool](`document.querySelector('#bulk-approve').hidden`)))
	do(t, ctx, "retry matching", chromedp.Click(chromedp.ID("bulk-retry")))
	waitJS(t, ctx, "the retry's result", `(d => d.action === 'retry' && d.applied === '2')(document.querySelector('#bulk-result').dataset)`)
	assert.Equal(t, "Retry 2 FAILED/INTERRUPTED tasks whose last error is permanent, whose tenant id starts with “eu-”? Each runs again from its checkpoint.", lastConfirm())
	for _, tenant := range []string{"eu-1", "eu-2"} {
		require.Eventually(t, func() bool { return tenantStatus(t, c, tenant) == "WAITING" }, 10*time.Second, 10*time.Millisecond, tenant)
	}

	// Cancel the gate's every task.
	do(t, ctx, "clear the filters", chromedp.Click(chromedp.ID("filter-clear")))
	waitJS(t, ctx, "the four at the gate again", `document.querySelector('[data-testid=gate][data-stage=gate]')?.dataset.count === '4'`)
	do(t, ctx, "list the gate", chromedp.Click(chromedp.CSS(`[data-testid=gate-show][data-stage=gate]`)))
	waitJS(t, ctx, "the gate's four", `document.querySelector('#tasks')?.dataset.query === 'status=WAITING&stage=1' && document.querySelector('#tasks-total').dataset.total === '4'`)
	do(t, ctx, "cancel matching", chromedp.Click(chromedp.ID("bulk-cancel")))
	waitJS(t, ctx, "the cancel's result", `(d => d.action === 'cancel' && d.applied === '4')(document.querySelector('#bulk-result').dataset)`)
	assert.Equal(t, "Cancel 4 WAITING tasks at stage 1: gate? Running ones are cancelled through their context.", lastConfirm())
	waitJS(t, ctx, "the plan cancelled", `document.querySelector('#plan-head')?.dataset.status === 'CANCELLED'`)
	waitJS(t, ctx, "the counts", `document.querySelector('[data-testid=summary-counts] [data-status=CANCELLED]')?.dataset.count === '4' && document.querySelector('#waiting').hidden`)
	for _, tenant := range []string{"eu-1", "eu-2", "us-1", "us-2"} {
		assert.Equal(t, "CANCELLED", tenantStatus(t, c, tenant), tenant)
	}

	// The plans list: its labels and its counts per status.
	do(t, ctx, "to the plans", chromedp.Click(chromedp.ID("nav-plans")))
	waitJS(t, ctx, "the plan listed", `document.querySelector('[data-testid=plan-row][data-plan-id="`+planID+`"]')?.dataset.status === 'CANCELLED'`)
	row := `document.querySelector('[data-testid=plan-row][data-plan-id="` + planID + `"]')`
	assert.Equal(t, []string{"change=CHG-7", "team=sre"}, do(t, ctx, "the labels", chromedp.Evaluate[[]string](
		`[...`+row+`.querySelectorAll('[data-testid=plan-label]')].map(e => e.textContent)`)))
	assert.Equal(t, "4", do(t, ctx, "the counts", chromedp.Evaluate[string](
		row+`.querySelector('[data-testid=plan-counts] [data-status=CANCELLED]')?.dataset.count ?? ''`)))
	require.True(t, do(t, ctx, "no reload", chromedp.Evaluate[bool](`window.sameDocument === true`)))
}
