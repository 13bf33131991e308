package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/server/servertest"
)

// submitYAML submits a plan through the API and returns its id.
func submitYAML(t *testing.T, c *client.Client, yaml string) string {
	t.Helper()
	p, _, err := c.SubmitPlan(context.Background(), []byte(yaml), "application/yaml", "", false)
	require.NoError(t, err)
	return p.PlanID
}

// tenantStatus is the status of the tenant's latest task, read through the API.
func tenantStatus(t *testing.T, c *client.Client, tenant string) string {
	t.Helper()
	task, err := c.TenantTask(context.Background(), tenant)
	require.NoError(t, err)
	return task.Status
}

// An approval gate in a real headless Chromium: both tasks of the plan stop WAITING at the
// gate with its message; one is approved and completes, the other is rejected with a comment
// and fails with it; the tenant view shows the decision and the tenant's lock.
func TestConsoleApprovalInChromium(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	api := client.New(srv.URL(), "", nil)
	planID := submitYAML(t, api, "name: gated\nmaxConcurrency: 2\nstages:\n"+
		"  - {name: prepare, kind: noop}\n"+
		"  - {name: gate, kind: approval, params: {message: check dashboards}}\n"+
		"  - {name: finish, kind: noop}\n"+
		"tenants:\n  - id: approve-me\n  - id: reject-me\n")
	ctx := browser(t)

	do(t, ctx, "open the plan", chromedp.Navigate(srv.URL()+"/#/plans/"+planID))
	do(t, ctx, "no dialogs", chromedp.Evaluate[bool](`(window.confirm = () => true, window.sameDocument = true)`))

	// Both tasks wait at the gate: in the matrix, in the progress, and in the waiting list
	// with the gate's stage and message.
	waitJS(t, ctx, "both tasks WAITING in the matrix", `document.querySelectorAll('[data-testid=task-row][data-status=WAITING]').length === 2`)
	waitJS(t, ctx, "both listed as waiting", `document.querySelectorAll('[data-testid=waiting-task]').length === 2 && !document.querySelector('#waiting').hidden`)
	waitJS(t, ctx, "the gate's cells waiting", `[...document.querySelectorAll('[data-testid=cell][data-stage=gate]')].every(c => c.dataset.state === 'waiting')`)
	waitJS(t, ctx, "the waiting count in the progress", `document.querySelector('[data-testid=plan-progress-waiting]')?.dataset.count === '2'`)
	waitJS(t, ctx, "the gate in the summary", `document.querySelector('[data-testid=gate][data-stage=gate]')?.dataset.count === '2' && `+
		`document.querySelector('[data-testid=matrix-cell][data-stage-index="1"][data-status=WAITING]')?.dataset.count === '2'`)
	messages := do(t, ctx, "the messages", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('[data-testid=waiting-task] [data-testid=wait-message]')].map(e => e.textContent)`))
	assert.Equal(t, []string{"check dashboards", "check dashboards"}, messages)
	stages := do(t, ctx, "the stages", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('[data-testid=waiting-task] [data-testid=wait-stage]')].map(e => e.textContent)`))
	assert.Equal(t, []string{"1: gate", "1: gate"}, stages)
	assert.Equal(t, "approval", do(t, ctx, "the reason",
		chromedp.Evaluate[string](`document.querySelector('[data-testid=wait-reason]').textContent`)))
	assert.NotEmpty(t, do(t, ctx, "how long it waited",
		chromedp.Evaluate[string](`document.querySelector('[data-testid=wait-age]').textContent`)))

	// Approve one: it completes.
	do(t, ctx, "approve", chromedp.Click(chromedp.CSS(`[data-testid=approve-task][data-tenant=approve-me]`)))
	waitJS(t, ctx, "approve-me completed", `document.querySelector('[data-testid=task-row][data-tenant=approve-me]')?.dataset.status === 'COMPLETED'`)

	// Reject the other, with a comment typed in the inline form: it fails.
	do(t, ctx, "reject", chromedp.Click(chromedp.CSS(`[data-testid=reject-task][data-tenant=reject-me]`)))
	do(t, ctx, "the comment field", chromedp.WaitVisible(chromedp.CSS(`[data-testid=reject-comment][data-tenant=reject-me]`)))
	do(t, ctx, "type the comment", chromedp.SendKeys(chromedp.CSS(`[data-testid=reject-comment][data-tenant=reject-me]`), "error rate too high"))
	waitJS(t, ctx, "the comment typed", `document.querySelector('[data-testid=reject-comment][data-tenant=reject-me]')?.value === 'error rate too high'`)
	do(t, ctx, "confirm the rejection", chromedp.Click(chromedp.CSS(`[data-testid=reject-confirm][data-tenant=reject-me]`)))
	waitJS(t, ctx, "reject-me failed", `document.querySelector('[data-testid=task-row][data-tenant=reject-me]')?.dataset.status === 'FAILED'`)
	waitJS(t, ctx, "nothing waits any more", `document.querySelector('#waiting').hidden && !document.querySelector('[data-testid=plan-progress-waiting]')`)

	// The API agrees: one completed, the other failed, the operator's comment on its decision.
	assert.Equal(t, "COMPLETED", tenantStatus(t, api, "approve-me"))
	rejected, err := api.TenantTask(context.Background(), "reject-me")
	require.NoError(t, err)
	assert.Equal(t, "FAILED", rejected.Status)
	require.NotNil(t, rejected.LastError)
	assert.Contains(t, rejected.LastError.Message, "rejected by an operator")
	require.NotNil(t, rejected.Decision)
	assert.Equal(t, "error rate too high", rejected.Decision.Comment)
	assert.Equal(t, "gate", rejected.LastError.Stage)
	require.Eventually(t, func() bool {
		p, err := api.Plan(context.Background(), planID, 0)
		require.NoError(t, err)
		return p.Status == "FAILED"
	}, 10*time.Second, 20*time.Millisecond, "the plan settles")

	// The rejected tenant's view: the decision with its comment, and its lock, not held.
	do(t, ctx, "open reject-me", chromedp.Click(chromedp.CSS(`[data-testid=tenant-link][data-tenant=reject-me]`)))
	waitJS(t, ctx, "its view", `document.querySelector('[data-testid=tenant]')?.dataset.status === 'FAILED'`)
	waitJS(t, ctx, "the decision", `document.querySelector('[data-testid=tenant-decision]')?.dataset.approved === 'false'`)
	assert.Contains(t, do(t, ctx, "the decision's text",
		chromedp.Evaluate[string](`document.querySelector('[data-testid=tenant-decision]').textContent`)), "error rate too high")
	waitJS(t, ctx, "its lock, not held", `document.querySelector('[data-testid=tenant-lock]')?.dataset.held === 'false'`)
	assert.True(t, do(t, ctx, "nothing to unlock", chromedp.Evaluate[bool](`document.querySelector('#tenant-unlock').disabled`)))
	assert.Empty(t, do(t, ctx, "no error shown", chromedp.Evaluate[string](`document.querySelector('#banner').hidden ? '' : document.querySelector('#banner-text').textContent`)))
	require.True(t, do(t, ctx, "no reload", chromedp.Evaluate[bool](`window.sameDocument === true`)),
		"the console never reloaded the page")
}

// A canary wave in a real headless Chromium: once the canary tenant completed the plan
// shows AWAITING_APPROVAL and the others have not started; "Approve rollout" lets them run
// and the plan completes.
func TestConsoleCanaryInChromium(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	api := client.New(srv.URL(), "", nil)
	planID := submitYAML(t, api, "name: canaried\nmaxConcurrency: 3\ncanary: {tenants: 1, then: approve}\nstages:\n"+
		"  - {name: push, kind: noop}\n  - {name: check, kind: noop}\n"+
		"tenants:\n  - id: canary-a\n  - id: canary-b\n  - id: canary-c\n")
	ctx := browser(t)

	do(t, ctx, "open the plan", chromedp.Navigate(srv.URL()+"/#/plans/"+planID))
	do(t, ctx, "no dialogs", chromedp.Evaluate[bool](`(window.confirm = () => true, window.sameDocument = true)`))
	waitJS(t, ctx, "the canary done", `document.querySelector('[data-testid=task-row][data-tenant=canary-a]')?.dataset.status === 'COMPLETED'`)
	waitJS(t, ctx, "the plan awaiting approval", `document.querySelector('#plan-head')?.dataset.phase === 'AWAITING_APPROVAL'`)
	assert.Equal(t, "AWAITING_APPROVAL", do(t, ctx, "the phase badge",
		chromedp.Evaluate[string](`document.querySelector('#plan-head [data-testid=plan-phase]').textContent`)))
	assert.Equal(t, []string{"PENDING", "PENDING"}, do(t, ctx, "the others not started", chromedp.Evaluate[[]string](
		`['canary-b', 'canary-c'].map(t => document.querySelector('[data-testid=task-row][data-tenant=' + t + ']').dataset.status)`)))
	assert.True(t, do(t, ctx, "a reject button", chromedp.Evaluate[bool](`!!document.querySelector('#plan-reject')`)))

	do(t, ctx, "approve the rollout", chromedp.Click(chromedp.ID("plan-approve")))
	waitJS(t, ctx, "the plan completed", `document.querySelector('#plan-head [data-testid=plan-status]')?.textContent.trim() === 'COMPLETED'`)
	p, err := api.Plan(context.Background(), planID, 0)
	require.NoError(t, err)
	assert.Equal(t, "COMPLETED", p.Status)
	require.NotNil(t, p.Canary)
	assert.Equal(t, "PROMOTED", p.Canary.Phase)
	for _, tenant := range []string{"canary-a", "canary-b", "canary-c"} {
		assert.Equal(t, "COMPLETED", tenantStatus(t, api, tenant), tenant)
	}
	assert.False(t, do(t, ctx, "the gate closed", chromedp.Evaluate[bool](`!!document.querySelector('#plan-approve')`)))
	require.True(t, do(t, ctx, "no reload", chromedp.Evaluate[bool](`window.sameDocument === true`)))
}

// A tenant's lock in a real headless Chromium: a running task holds it; Unlock asks first
// (a dismissed confirmation changes nothing), then releases it and the task is interrupted;
// "Retry failed and interrupted" on the plan retries it (INTERRUPTED, as its label says) and
// says so.
func TestConsoleUnlockAndRetryInChromium(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	api := client.New(srv.URL(), "", nil)
	planID := submitYAML(t, api, "name: stuck\nstages:\n  - {name: bake, kind: sleep, params: {duration: 10m}}\ntenants:\n  - id: stuck-a\n")
	require.Eventually(t, func() bool { return tenantStatus(t, api, "stuck-a") == "RUNNING" }, 10*time.Second, 10*time.Millisecond)
	ctx := browser(t)

	do(t, ctx, "open the tenant", chromedp.Navigate(srv.URL()+"/#/tenants/stuck-a"))
	waitJS(t, ctx, "its lock held", `document.querySelector('[data-testid=tenant-lock]')?.dataset.held === 'true'`)
	owner := do(t, ctx, "the owner", chromedp.Evaluate[string](`document.querySelector('[data-testid=tenant-lock-owner]').textContent`))
	assert.Contains(t, owner, planID)
	assert.NotEmpty(t, do(t, ctx, "the epoch", chromedp.Evaluate[string](`document.querySelector('[data-testid=tenant-lock-epoch]').textContent`)))

	// A dismissed confirmation: nothing happens.
	do(t, ctx, "dismiss dialogs", chromedp.Evaluate[bool](`(window.confirm = () => false, window.sameDocument = true)`))
	do(t, ctx, "unlock, dismissed", chromedp.Click(chromedp.ID("tenant-unlock")))
	assert.Equal(t, "RUNNING", tenantStatus(t, api, "stuck-a"))
	assert.True(t, do(t, ctx, "no result", chromedp.Evaluate[bool](`document.querySelector('#tenant-unlock-result').hidden`)))

	// Confirmed: released, and the running task interrupted.
	do(t, ctx, "accept dialogs", chromedp.Evaluate[bool](`(window.confirm = () => true, true)`))
	do(t, ctx, "unlock", chromedp.Click(chromedp.ID("tenant-unlock")))
	waitJS(t, ctx, "released", `document.querySelector('#tenant-unlock-result')?.dataset.released === 'true'`)
	waitJS(t, ctx, "interrupted", `document.querySelector('[data-testid=tenant]')?.dataset.status === 'INTERRUPTED'`)
	waitJS(t, ctx, "the lock not held", `document.querySelector('[data-testid=tenant-lock]')?.dataset.held === 'false'`)
	assert.Equal(t, "INTERRUPTED", tenantStatus(t, api, "stuck-a"))

	// On the plan, "Retry failed and interrupted" retries it from its checkpoint and tells how
	// many: the label names the INTERRUPTED tasks it takes, as `executor plan retry` does.
	// (Followed by script: the tenant view re-renders as its task's events come, and a
	// click could land between two renders.)
	do(t, ctx, "to the plan", chromedp.Evaluate[bool](`(document.querySelector('#tenant-plan-link').click(), true)`))
	waitJS(t, ctx, "the task interrupted", `document.querySelector('[data-testid=task-row][data-tenant=stuck-a]')?.dataset.status === 'INTERRUPTED'`)
	waitJS(t, ctx, "retry enabled", `document.querySelector('#plan-retry-failed')?.disabled === false`)
	assert.Equal(t, "Retry failed and interrupted", do(t, ctx, "the retry's label",
		chromedp.Evaluate[string](`document.querySelector('#plan-retry-failed').textContent`)))
	do(t, ctx, "retry failed", chromedp.Click(chromedp.ID("plan-retry-failed")))
	waitJS(t, ctx, "the result", `document.querySelector('#plan-retry-result')?.dataset.retried === '1'`)
	assert.Equal(t, "0", do(t, ctx, "none skipped", chromedp.Evaluate[string](`document.querySelector('#plan-retry-result').dataset.skipped`)))
	require.Eventually(t, func() bool { return tenantStatus(t, api, "stuck-a") == "RUNNING" }, 10*time.Second, 10*time.Millisecond, "retried")
	waitJS(t, ctx, "running again", `document.querySelector('[data-testid=task-row][data-tenant=stuck-a]')?.dataset.status === 'RUNNING'`)
	require.True(t, do(t, ctx, "no reload", chromedp.Evaluate[bool](`window.sameDocument === true`)))
}
