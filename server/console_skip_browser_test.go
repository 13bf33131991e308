package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/server/servertest"
)

// Skipping a tenant in a real headless Chromium: the tenant view of a task WAITING at its
// gate offers Skip (the status rules say skippable); confirmed, the task ends SKIPPED, Skip is
// offered no more, and the plan, whose other tenant completes, reads "with exceptions" in
// the plan list.
func TestConsoleSkipInChromium(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	api := client.New(srv.URL(), "", nil)
	submitYAML(t, api, "name: skippable\nstages:\n"+
		"  - {name: gate, kind: approval}\n"+
		"tenants:\n  - id: sk-a\n  - id: sk-b\n")
	require.Eventually(t, func() bool { return tenantStatus(t, api, "sk-a") == "WAITING" }, 10*time.Second, 20*time.Millisecond)
	ctx := browser(t)

	do(t, ctx, "open the tenant", chromedp.Navigate(srv.URL()+"/#/tenants/sk-a"))
	do(t, ctx, "record dialogs", chromedp.Evaluate[bool](recordConfirms))
	waitJS(t, ctx, "skip offered", `document.querySelector('[data-testid=tenant]')?.dataset.status === 'WAITING' && `+
		`document.querySelector('#tenant-skip')?.disabled === false`)
	do(t, ctx, "skip", chromedp.Click(chromedp.ID("tenant-skip")))
	waitJS(t, ctx, "skipped", `document.querySelector('[data-testid=tenant]')?.dataset.status === 'SKIPPED'`)
	assert.True(t, do(t, ctx, "skip offered no more", chromedp.Evaluate[bool](`document.querySelector('#tenant-skip').disabled`)))
	confirms := do(t, ctx, "the confirmation", chromedp.Evaluate[[]string](`window.confirms`))
	require.Len(t, confirms, 1)
	assert.Contains(t, confirms[0], "Skip tenant sk-a?")

	res, err := http.Post(srv.URL()+"/v1/tenants/sk-b/approve", "application/json", nil)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusOK, res.StatusCode)
	do(t, ctx, "open the plans", chromedp.Navigate(srv.URL()+"/#/plans"))
	waitJS(t, ctx, "the plan completed with exceptions", `[...document.querySelectorAll('[data-testid=plan-row-outcome]')].some(e => e.textContent === 'with exceptions: 1 skipped')`)
}
