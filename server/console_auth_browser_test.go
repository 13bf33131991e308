package server_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/auth"
	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
)

// The console with tokens, in a real headless Chromium: the login form first; a read token
// shows the plans but a pause fails visibly (403) and changes nothing; after logging out and
// in with the operate token the pause works.
func TestConsoleLoginInChromium(t *testing.T) {
	t.Parallel()
	const (
		readSecret    = "browser-read-0123456789abcdef"
		operateSecret = "browser-operate-0123456789abcdef"
	)
	srv := servertest.With(t, server.Config{Tokens: []auth.Token{
		{Role: auth.RoleRead, Secret: readSecret}, {Role: auth.RoleOperate, Name: "alice", Secret: operateSecret},
	}})
	// A running plan: its one stage sleeps for longer than the test.
	operator := client.New(srv.URL(), operateSecret, nil)
	plan, _, err := operator.SubmitPlan(context.Background(),
		[]byte("name: guarded\nstages:\n  - {name: bake, kind: sleep, params: {duration: 10m}}\ntenants:\n  - id: guarded-a\n"),
		"application/yaml", "", false)
	require.NoError(t, err)
	planStatus := func() string {
		t.Helper()
		p, err := operator.Plan(context.Background(), plan.PlanID, 0)
		require.NoError(t, err)
		return p.Status
	}
	require.Eventually(t, func() bool { return planStatus() == "RUNNING" }, 10e9, 10e6, "the plan starts")

	ctx := browser(t)
	logIn := func(secret string) {
		t.Helper()
		do(t, ctx, "the login form", chromedp.WaitVisible(chromedp.ID("login-token")))
		do(t, ctx, "type the token", chromedp.SetValue(chromedp.ID("login-token"), secret))
		do(t, ctx, "log in", chromedp.Click(chromedp.ID("login-submit")))
		do(t, ctx, "the console", chromedp.WaitVisible(chromedp.CSS(`[data-testid=plan-row]`)))
		waitJS(t, ctx, "the plans list", `document.querySelector('[data-testid=plan-row]')?.dataset.planId === '`+plan.PlanID+`'`)
	}
	pause := func() {
		t.Helper()
		do(t, ctx, "open the plan", chromedp.Click(chromedp.CSS(`[data-testid=plan-link]`)))
		waitJS(t, ctx, "the plan running", `document.querySelector('#plan-head')?.dataset.status === 'RUNNING'`)
		do(t, ctx, "no dialogs", chromedp.Evaluate[bool](`(window.confirm = () => true, true)`))
		do(t, ctx, "pause", chromedp.Click(chromedp.ID("plan-pause")))
	}

	// Without a token: the login form, styled (its CSP allows its one inline style), and no
	// console.
	do(t, ctx, "open the console", chromedp.Navigate(srv.URL()+"/"))
	do(t, ctx, "the login form", chromedp.WaitVisible(chromedp.ID("login-token")))
	assert.Equal(t, "rgb(246, 247, 249)", do(t, ctx, "the page's style",
		chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`)), "the inline style applies")
	assert.False(t, do(t, ctx, "no console", chromedp.Evaluate[bool](`!!document.querySelector('#view')`)))
	logIn(readSecret)
	waitJS(t, ctx, "the role shown", `document.querySelector('[data-testid=whoami]')?.textContent === 'read'`)

	// The read token cannot pause: the 403 is shown and the plan still runs.
	pause()
	waitJS(t, ctx, "the refusal shown", `!document.querySelector('#banner').hidden && document.querySelector('#banner').dataset.status === '403'`)
	assert.Equal(t, "RUNNING", do(t, ctx, "the plan's status shown", chromedp.Evaluate[string](`document.querySelector('#plan-head').dataset.status`)))
	assert.Equal(t, "RUNNING", planStatus(), "nothing changed")

	// Log out, log in with the operate token: the pause works.
	do(t, ctx, "log out", chromedp.Click(chromedp.ID("logout")))
	logIn(operateSecret)
	waitJS(t, ctx, "who is logged in", `document.querySelector('[data-testid=whoami]')?.textContent === 'alice (operate)'`)
	pause()
	waitJS(t, ctx, "the plan paused", `document.querySelector('#plan-head')?.dataset.status === 'PAUSED'`)
	assert.Equal(t, "PAUSED", planStatus())
}
