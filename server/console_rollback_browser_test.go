package server_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/server/servertest"
)

// Rolling a tenant back in a real headless Chromium: the tenant view of a COMPLETED task
// offers Roll back (the status rules say undoable); confirmed, the task undoes its stages
// newest first and ends ROLLED_BACK, its badge coloured, its undo attempts marked undo: in the
// ledger, a line saying it is rolled back; a ROLLED_BACK task offers Roll back no more.
func TestConsoleRollbackInChromium(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	api := client.New(srv.URL(), "", nil)
	submitYAML(t, api, "name: undoable\nstages:\n"+
		"  - {name: push, kind: noop, undo: {kind: noop}}\n"+
		"  - {name: verify, kind: noop}\n"+
		"  - {name: config, kind: noop, undo: {kind: noop}}\n"+
		"tenants:\n  - id: rb-a\n")
	require.Eventually(t, func() bool { return tenantStatus(t, api, "rb-a") == "COMPLETED" }, 10*time.Second, 20*time.Millisecond)
	ctx := browser(t)

	do(t, ctx, "open the tenant", chromedp.Navigate(srv.URL()+"/#/tenants/rb-a"))
	do(t, ctx, "record dialogs", chromedp.Evaluate[bool](recordConfirms))
	waitJS(t, ctx, "roll back offered", `document.querySelector('[data-testid=tenant]')?.dataset.status === 'COMPLETED' && `+
		`document.querySelector('#tenant-rollback')?.disabled === false`)
	assert.False(t, do(t, ctx, "no rollback line yet", chromedp.Evaluate[bool](`!!document.querySelector('[data-testid=tenant-rollback-state]')`)))

	do(t, ctx, "roll back", chromedp.Click(chromedp.ID("tenant-rollback")))
	waitJS(t, ctx, "rolled back", `document.querySelector('[data-testid=tenant]')?.dataset.status === 'ROLLED_BACK'`)
	waitJS(t, ctx, "the undos in the ledger", `document.querySelectorAll('[data-testid=attempt-row][data-undo=true]').length === 2`)
	assert.Equal(t, []string{"2: undo:config", "0: undo:push"}, do(t, ctx, "the undo rows, newest first", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('[data-testid=attempt-row][data-undo=true]')].map(r => r.children[1].textContent)`)))
	assert.Equal(t, 2, do(t, ctx, "each marked", chromedp.Evaluate[int](`document.querySelectorAll('[data-testid=attempt-undo]').length`)))
	assert.Contains(t, do(t, ctx, "the rollback line", chromedp.Evaluate[string](`document.querySelector('[data-testid=tenant-rollback-state]').textContent`)),
		"rolled back: every stage it completed is undone")
	assert.Equal(t, "(all undone)", do(t, ctx, "the current stage", chromedp.Evaluate[string](`document.querySelector('[data-testid=tenant-stage]').textContent`)))
	assert.Equal(t, []string{"undone", "undone", "undone"}, do(t, ctx, "the stage strip", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('[data-testid=task-row] [data-testid=cell]')].map(c => c.dataset.state)`)))
	assert.Equal(t, "rgb(160, 97, 60)", do(t, ctx, "the badge's colour", chromedp.Evaluate[string](
		`getComputedStyle(document.querySelector('[data-testid=tenant-status]')).backgroundColor`)))
	assert.True(t, do(t, ctx, "roll back offered no more", chromedp.Evaluate[bool](`document.querySelector('#tenant-rollback').disabled`)))
	confirms := do(t, ctx, "the confirmation", chromedp.Evaluate[[]string](`window.confirms`))
	require.Len(t, confirms, 1)
	assert.Contains(t, confirms[0], "Roll back tenant rb-a's task?")
	assert.Equal(t, "ROLLED_BACK", tenantStatus(t, api, "rb-a"))
}
