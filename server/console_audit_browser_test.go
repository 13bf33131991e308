package server_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/auth"
	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// auditRows is what the Audit tab's rows show: "action actor-cell result", in order.
const auditRows = `[...document.querySelectorAll('[data-testid=audit-row]')].map(r => r.dataset.action + ' ' +
	r.querySelector('[data-testid=audit-actor]').textContent + ' ' + r.querySelector('[data-testid=audit-result]').textContent)`

// The plan page's Audit tab in a real headless Chromium: bob submits a plan; alice, logged in,
// pauses and resumes it from the page, then approves its tenant, which waits at no gate, 101
// times through the API (refused, the first time with a comment holding markup). The Audit
// tab lists the newest 100 actions, each with its actor and role; "Load more" brings the rest,
// newest first: the commented refusal with its code and the comment as text, alice's resume and
// pause, bob's submission. The tab stays in the address: a reload opens it again.
func TestConsoleAuditInChromium(t *testing.T) {
	t.Parallel()
	const (
		aliceSecret = "browser-alice-0123456789abcdef"
		bobSecret   = "browser-bob-0123456789abcdef"
		comment     = `<b>nope</b> "not yet"`
	)
	srv := servertest.With(t, server.Config{Tokens: []auth.Token{
		{Role: auth.RoleOperate, Name: "alice", Secret: aliceSecret}, {Role: auth.RoleOperate, Name: "bob", Secret: bobSecret},
	}})
	planID := submitYAML(t, client.New(srv.URL(), bobSecret, nil),
		"name: audited\nstages:\n  - {name: bake, kind: sleep, params: {duration: 10m}}\ntenants:\n  - id: audit-a\n")
	alice := client.New(srv.URL(), aliceSecret, nil)
	ctx := browser(t)

	do(t, ctx, "open the console", chromedp.Navigate(srv.URL()+"/"))
	do(t, ctx, "the login form", chromedp.WaitVisible(chromedp.ID("login-token")))
	do(t, ctx, "type alice's token", chromedp.SetValue(chromedp.ID("login-token"), aliceSecret))
	do(t, ctx, "log in", chromedp.Click(chromedp.ID("login-submit")))
	do(t, ctx, "the console", chromedp.WaitVisible(chromedp.CSS(`[data-testid=plan-row]`)))
	waitJS(t, ctx, "the plans list", `document.querySelector('[data-testid=plan-row]')?.dataset.planId === '`+planID+`'`)
	do(t, ctx, "record dialogs", chromedp.Evaluate[bool](recordConfirms))
	do(t, ctx, "open the plan", chromedp.Click(chromedp.CSS(`[data-testid=plan-link]`)))
	waitJS(t, ctx, "the overview tab", `document.querySelector('[data-testid=tab-overview]')?.getAttribute('aria-selected') === 'true' && `+
		`document.querySelector('#plan-audit').hidden && !document.querySelector('#plan-overview').hidden`)
	waitJS(t, ctx, "pause offered", `document.querySelector('#plan-pause')?.disabled === false`)
	do(t, ctx, "pause", chromedp.Click(chromedp.ID("plan-pause")))
	waitJS(t, ctx, "the plan paused", `document.querySelector('#plan-head')?.dataset.status === 'PAUSED' && document.querySelector('#plan-resume')?.disabled === false`)
	do(t, ctx, "resume", chromedp.Click(chromedp.ID("plan-resume")))
	waitJS(t, ctx, "the plan running", `document.querySelector('#plan-head')?.dataset.status === 'RUNNING'`)

	for i := range 101 {
		body := wire.DecisionBody{}
		if i == 0 {
			body.Comment = comment
		}
		err := alice.Call(context.Background(), http.MethodPost, "/v1/tenants/audit-a/approve", body, nil)
		require.Equal(t, http.StatusConflict, client.StatusCode(err), "approving a task that waits at no gate: %v", err)
	}

	do(t, ctx, "open the Audit tab", chromedp.Click(chromedp.ID("tab-audit")))
	waitJS(t, ctx, "the first page", `document.querySelectorAll('[data-testid=audit-row]').length === 100`)
	assert.True(t, do(t, ctx, "the overview hidden", chromedp.Evaluate[bool](`document.querySelector('#plan-overview').hidden`)))
	first := do(t, ctx, "the first page's rows", chromedp.Evaluate[[]string](auditRows))
	for _, r := range first {
		assert.Regexp(t, `^approve alice \(operate\) refused: [a-z-]+$`, r)
	}
	waitJS(t, ctx, "more to load", `!document.querySelector('#audit-more').hidden`)

	do(t, ctx, "load more", chromedp.Click(chromedp.ID("audit-more")))
	waitJS(t, ctx, "every action", `document.querySelectorAll('[data-testid=audit-row]').length === 104`)
	waitJS(t, ctx, "nothing more to load", `document.querySelector('#audit-more').hidden`)
	rows := do(t, ctx, "the rows", chromedp.Evaluate[[]string](auditRows))
	require.Len(t, rows, 104)
	assert.Regexp(t, `^approve alice \(operate\) refused: [a-z-]+$`, rows[100])
	assert.Equal(t, []string{"resume alice (operate) applied", "pause alice (operate) applied", "submit bob (operate) applied"}, rows[101:])
	details := do(t, ctx, "the details", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('[data-testid=audit-details]')].slice(100).map(d => d.textContent)`))
	require.Len(t, details, 4)
	assert.Regexp(t, `^comment="<b>nope</b> \\"not yet\\"" → error="task: cannot decide on a [A-Z]+ task: only a task WAITING at a gate .*"$`, details[0],
		"the request, then what the refusal told the caller")
	assert.Equal(t, []string{"→ status=RUNNING", "→ status=PAUSED", "name=audited tenants=1"}, details[1:])
	assert.False(t, do(t, ctx, "the comment is text", chromedp.Evaluate[bool](`!!document.querySelector('[data-testid=audit-details] b')`)))
	assert.Equal(t, []string{"audit-a", "—", "—", "—"}, do(t, ctx, "the tenants", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('[data-testid=audit-tenant]')].slice(100).map(d => d.textContent)`)))

	// The tab is in the address: a reload opens it again.
	assert.Contains(t, do(t, ctx, "the address", chromedp.Evaluate[string](`location.hash`)), "tab=audit")
	do(t, ctx, "reload", chromedp.Reload())
	waitJS(t, ctx, "the Audit tab again", `document.querySelectorAll('[data-testid=audit-row]').length === 100 && `+
		`document.querySelector('[data-testid=tab-audit]').getAttribute('aria-selected') === 'true'`)
	do(t, ctx, "back to the overview", chromedp.Click(chromedp.ID("tab-overview")))
	waitJS(t, ctx, "the overview shown", `!document.querySelector('#plan-overview').hidden && document.querySelector('#plan-audit').hidden`)
	assert.NotContains(t, do(t, ctx, "the address", chromedp.Evaluate[string](`location.hash`)), "tab=")
}
