package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// recordConfirms makes window.confirm accept and keep its messages in window.confirms, and
// marks the document so that a reload shows.
const recordConfirms = `(window.confirms = [], window.confirm = (m) => (window.confirms.push(m), true), window.sameDocument = true)`

// ringRow is the JavaScript expression of ring i's row in the rings panel.
func ringRow(i int) string {
	return fmt.Sprintf(`document.querySelector('[data-testid=rings] [data-testid=ring-row][data-index="%d"]')`, i)
}

// The rings panel in a real headless Chromium: a plan of 4 tenants in rings "first" (1
// tenant, baked 5 s, then approve) and "rest". The panel shows ring 0 baking with its
// countdown, then awaiting approval with Approve and Reject; Approve, confirmed, starts the
// rest, and the plan completes with every ring passed.
func TestConsoleRingsBrowserBakeThenApprove(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	c := client.New(srv.URL(), "", nil)
	// The plan starts a few seconds after it is submitted: the page is open by then and sees
	// ring 0 bake from its start.
	startAt := time.Now().Add(4 * time.Second).UTC().Format(time.RFC3339Nano)
	planID := submitYAML(t, c, "name: ringed\nmaxConcurrency: 4\nstartAt: "+startAt+"\n"+
		`waves: [{"name":"first","size":1,"bake":"5s","then":"approve"},{"name":"rest","size":"rest","failureBudget":"50%"}]`+"\n"+
		"stages:\n  - {name: push, kind: noop}\n  - {name: check, kind: noop}\n"+
		"tenants:\n  - id: ring-a\n  - id: ring-b\n  - id: ring-c\n  - id: ring-d\n")
	ctx := browser(t)

	do(t, ctx, "open the plan", chromedp.Navigate(srv.URL()+"/#/plans/"+planID))
	do(t, ctx, "record dialogs", chromedp.Evaluate[bool](recordConfirms))
	waitJS(t, ctx, "the rings panel", `!document.querySelector('[data-testid=rings]').hidden && `+
		`document.querySelectorAll('[data-testid=rings] [data-testid=ring-row]').length === 2`)
	// (The bake's cell of the baking ring adds the time left after the bake: "5s · 4s left".)
	assert.Equal(t, []string{"0|first|1|1|approve|0|5s|—", "1|rest|rest|3|auto|50%|—|—"}, do(t, ctx, "the rows", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('[data-testid=ring-row]')].map(r => [r.dataset.index, r.dataset.name, `+
			`...['ring-size', 'ring-tenants', 'ring-then', 'ring-budget', 'ring-bake', 'ring-health'].map(id => r.querySelector('[data-testid=' + id + ']').textContent.split(' ')[0])].join('|'))`)))
	// The failure budget reads one way: a ring's share with the tenants it lets fail, and the
	// plan's, per ring and plan-wide, as `executor plan show` says it.
	assert.Equal(t, "50% (1 of 3)", do(t, ctx, "ring 1's budget", chromedp.Evaluate[string](ringRow(1)+`.querySelector('[data-testid=ring-budget]').textContent`)))
	assert.Equal(t, "per ring, crossing it halts the plan (ring 0 now: 0 of 1 tenant(s) may fail, budget 0); plan-wide: none",
		do(t, ctx, "the plan's budget", chromedp.Evaluate[string](`document.querySelector('[data-testid=plan-budget]').textContent`)))

	// Ring 0 bakes: the current ring, its countdown shown; then it awaits approval. (5 s of
	// bake: a 1 s bake could end before a page on a loaded machine showed it.)
	waitJS(t, ctx, "ring 0 baking", ringRow(0)+`?.dataset.state === 'baking' && `+ringRow(0)+`.dataset.current === 'true' && `+
		`/left|ending/.test(`+ringRow(0)+`.querySelector('[data-testid=ring-bake-left]')?.textContent || '')`)
	waitJS(t, ctx, "ring 0 awaiting approval", ringRow(0)+`?.dataset.state === 'awaiting_approval' && `+
		`document.querySelector('[data-testid=rings]').dataset.state === 'awaiting_approval' && !!document.querySelector('#rings-approve')`)
	assert.Equal(t, "pending", do(t, ctx, "ring 1 pending", chromedp.Evaluate[string](ringRow(1)+`.dataset.state`)))
	assert.False(t, do(t, ctx, "no bake countdown any more", chromedp.Evaluate[bool](`!!document.querySelector('[data-testid=ring-bake-left]')`)))
	assert.True(t, do(t, ctx, "a reject button", chromedp.Evaluate[bool](`!!document.querySelector('#rings-reject')`)))
	assert.False(t, do(t, ctx, "no canary buttons", chromedp.Evaluate[bool](`!!document.querySelector('#plan-approve')`)))
	assert.Contains(t, do(t, ctx, "what waits", chromedp.Evaluate[string](`document.querySelector('[data-testid=rings-awaiting-text]').textContent`)),
		"ring 1 (rest), 3 tenant(s), waits for an operator's approval")
	for _, tenant := range []string{"ring-b", "ring-c", "ring-d"} {
		assert.Equal(t, "PENDING", tenantStatus(t, c, tenant), tenant)
	}

	do(t, ctx, "approve", chromedp.Click(chromedp.ID("rings-approve")))
	waitJS(t, ctx, "the plan completed", `document.querySelector('#plan-head [data-testid=plan-status]')?.textContent.trim() === 'COMPLETED'`)
	waitJS(t, ctx, "every ring passed", `[...document.querySelectorAll('[data-testid=ring-row]')].map(r => r.dataset.state).join() === 'passed,passed'`)
	confirms := do(t, ctx, "the confirmations", chromedp.Evaluate[[]string](`window.confirms`))
	require.Len(t, confirms, 1)
	assert.Contains(t, confirms[0], "start ring 1 (rest), 3 tenant(s)")
	assert.False(t, do(t, ctx, "the gate closed", chromedp.Evaluate[bool](`!!document.querySelector('#rings-approve, #rings-reject, [data-testid=rings-awaiting]')`)))

	p, err := c.Plan(context.Background(), planID, 0)
	require.NoError(t, err)
	assert.Equal(t, "COMPLETED", p.Status)
	require.NotNil(t, p.Rings)
	for _, w := range p.Rings.Waves {
		assert.Equal(t, "passed", w.State, w.Name)
	}
	for _, tenant := range []string{"ring-a", "ring-b", "ring-c", "ring-d"} {
		assert.Equal(t, "COMPLETED", tenantStatus(t, c, tenant), tenant)
	}
	assert.Empty(t, do(t, ctx, "no error shown", chromedp.Evaluate[string](`document.querySelector('#banner').hidden ? '' : document.querySelector('#banner-text').textContent`)))
	require.True(t, do(t, ctx, "no reload", chromedp.Evaluate[bool](`window.sameDocument === true`)))
}

// A halted ring in a real headless Chromium: the first ring's one tenant fails (its http
// stage answers 400), over the ring's budget of 0. The panel shows the halt and its reason,
// naming the tenant, with Approve and Reject; Reject, confirmed, cancels the tenants not
// started and the plan ends; the rest's tenants are never called.
func TestConsoleRingsBrowserHaltedReject(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	srv := servertest.Start(t)
	c := client.New(srv.URL(), "", nil)
	body := ringsBody(tg, 4, map[int]bool{0: true}, `[{"name":"first","size":1},{"name":"rest","size":"rest"}]`, "")
	var created wire.Plan
	require.Equal(t, http.StatusCreated, cfHTTP(t, http.MethodPost, srv.URL()+"/v1/plans", body, &created))
	ctx := browser(t)

	do(t, ctx, "open the plan", chromedp.Navigate(srv.URL()+"/#/plans/"+created.PlanID))
	do(t, ctx, "record dialogs", chromedp.Evaluate[bool](recordConfirms))
	waitJS(t, ctx, "ring 0 halted", ringRow(0)+`?.dataset.state === 'halted' && `+
		`document.querySelector('[data-testid=rings]').dataset.halted === 'true' && !!document.querySelector('#rings-reject')`)
	reason := do(t, ctx, "the reason", chromedp.Evaluate[string](`document.querySelector('[data-testid=rings-halted-reason]').textContent`))
	assert.Contains(t, reason, "ring-000")
	assert.Contains(t, reason, "ring 0 (first)")
	assert.Equal(t, "first", do(t, ctx, "the halted wave", chromedp.Evaluate[string](`document.querySelector('[data-testid=rings-halted]').dataset.wave`)))
	assert.True(t, do(t, ctx, "an approve button", chromedp.Evaluate[bool](`!!document.querySelector('#rings-approve')`)))
	assert.Equal(t, "pending", do(t, ctx, "ring 1 pending", chromedp.Evaluate[string](ringRow(1)+`.dataset.state`)))
	assert.Equal(t, "RUNNING", do(t, ctx, "the plan still running", chromedp.Evaluate[string](`document.querySelector('#plan-head').dataset.status`)))

	do(t, ctx, "reject", chromedp.Click(chromedp.ID("rings-reject")))
	waitJS(t, ctx, "the plan ended", `['CANCELLED', 'FAILED'].includes(document.querySelector('#plan-head [data-testid=plan-status]')?.textContent.trim())`)
	waitJS(t, ctx, "ring 0 rejected", ringRow(0)+`?.dataset.state === 'rejected' && !document.querySelector('#rings-approve, #rings-reject')`)
	confirms := do(t, ctx, "the confirmations", chromedp.Evaluate[[]string](`window.confirms`))
	require.Len(t, confirms, 1)
	assert.Contains(t, confirms[0], "cancel the 3 tenant(s) not started")
	assert.Contains(t, do(t, ctx, "the panel says rejected", chromedp.Evaluate[string](`document.querySelector('[data-testid=rings-halted-title]').textContent`)), "Rejected")

	p, err := c.Plan(context.Background(), created.PlanID, 0)
	require.NoError(t, err)
	assert.Contains(t, []string{"CANCELLED", "FAILED"}, p.Status)
	assert.Equal(t, 1, p.Progress["FAILED"])
	assert.Equal(t, 3, p.Progress["CANCELLED"])
	for i := 1; i < 4; i++ {
		tenant := fmt.Sprintf("ring-%03d", i)
		assert.Empty(t, tg.callsOf(tenant, "deploy"), "%s of the rest was called", tenant)
		assert.Equal(t, "CANCELLED", tenantStatus(t, c, tenant), tenant)
	}
	assert.Empty(t, do(t, ctx, "no error shown", chromedp.Evaluate[string](`document.querySelector('#banner').hidden ? '' : document.querySelector('#banner-text').textContent`)))
	require.True(t, do(t, ctx, "no reload", chromedp.Evaluate[bool](`window.sameDocument === true`)))
}
