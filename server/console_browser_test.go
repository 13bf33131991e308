package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/stagekind"
)

// chromiumPath finds Debian's chromium; a missing browser fails the test with the install
// hint (make test installs it as root).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no chromium on PATH: run 'sudo apt-get install -y chromium' (make test does it as root)")
	return ""
}

// browser is a headless Chromium tab, closed when t ends.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox, chromedp.WindowSize(1280, 860))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelTab(); cancelAlloc() })
	return ctx
}

// do runs one browser action and fails the test on error.
func do[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	require.NoError(t, err, what)
	return v
}

// waitJS waits until the JavaScript expression is true.
func waitJS(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	do(t, ctx, what, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(30*time.Second)))
}

// screenshot saves the page as docs/<name>.png when CONSOLE_SCREENSHOTS names a folder
// (make screenshots), else into the test's temporary folder.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("CONSOLE_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	png := do(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
}

const cells = `document.querySelectorAll('[data-testid=cell]')`

// The console in a real headless Chromium: submit a plan, watch its matrix turn done without
// a reload, find a tenant, retry a failed tenant from its checkpoint and watch it complete.
func TestConsoleInChromium(t *testing.T) {
	t.Parallel()
	var healed atomic.Bool // until set, stage "verify" fails for tenant "delta"
	srv := servertest.With(t, server.Config{Name: "console-1"}, func(r *stagekind.Registry) {
		require.NoError(t, r.Register("verify", stage.HandlerFunc(func(_ context.Context, req stage.Request) (json.RawMessage, error) {
			if req.TenantID == "delta" && !healed.Load() {
				req.KeepTranscript(stage.Transcript{Stdout: "checking <b>delta</b>\n", Stderr: "GET /health: 503\n"})
				return nil, stage.Permanent(errors.New("health check failed"))
			}
			return json.RawMessage(`{"ok":true}`), nil
		})))
	})
	ctx := browser(t)

	// Submit a plan from the form.
	do(t, ctx, "open the submit form", chromedp.Navigate(srv.URL()+"/#/submit"))
	do(t, ctx, "wait for the form", chromedp.WaitVisible(chromedp.ID("submit-yaml")))
	yaml := "name: browser\nmaxConcurrency: 4\nstages:\n  - {name: push, kind: noop}\n" +
		"  - {name: bake, kind: sleep, params: {duration: 300ms}}\n  - {name: check, kind: verify}\n" +
		"tenants:\n  - id: alpha\n  - id: beta\n  - id: gamma\n  - id: delta\n"
	do(t, ctx, "type the plan", chromedp.SetValue(chromedp.ID("submit-yaml"), yaml))
	// Confirmations are accepted; a marker on window tells at the end that no reload happened.
	do(t, ctx, "no dialogs", chromedp.Evaluate[bool](`(window.confirm = () => true, window.sameDocument = true)`))
	do(t, ctx, "dry run", chromedp.Click(chromedp.ID("dry-run")))
	waitJS(t, ctx, "the preview of each tenant", `document.querySelectorAll('[data-testid=dry-run-tenant]').length === 4`)
	do(t, ctx, "submit", chromedp.Click(chromedp.ID("submit")))

	// The matrix fills in live: 3 tenants done, delta failed at its third stage.
	waitJS(t, ctx, "the plan's matrix", cells+`.length === 12`)
	screenshot(t, ctx, "console-plan-running")
	waitJS(t, ctx, "alpha, beta and gamma done", `[...`+cells+`].filter(c => c.dataset.tenant !== 'delta' && c.dataset.state === 'done').length === 9`)
	waitJS(t, ctx, "delta failed at check", `document.querySelector('[data-testid=cell][data-tenant=delta][data-stage=check]').dataset.state === 'failed'`)
	screenshot(t, ctx, "console-plan")

	// Find delta: its task failed at stage 2 with a checkpoint of two stages.
	do(t, ctx, "search", chromedp.SetValue(chromedp.ID("tenant-search"), "delta"))
	do(t, ctx, "find", chromedp.Click(chromedp.ID("tenant-search-go")))
	waitJS(t, ctx, "delta's view", `document.querySelector('[data-testid=tenant]')?.dataset.status === 'FAILED'`)
	waitJS(t, ctx, "its checkpoint", `document.querySelectorAll('[data-testid=checkpoint-stage]').length === 2`)
	// Under the failed attempt's row, what it printed: one <pre> per stream, markup as text.
	waitJS(t, ctx, "the failed check's output", `(o => o?.dataset.stage === 'check' &&
		o.querySelector('[data-testid=attempt-stdout]').textContent === 'checking <b>delta</b>\n' &&
		o.querySelector('[data-testid=attempt-stderr]').textContent === 'GET /health: 503\n' &&
		!o.querySelector('b') && o.previousElementSibling?.dataset.stage === 'check')(document.querySelector('[data-testid=attempt-output]'))`)
	screenshot(t, ctx, "console-tenant")

	// Retry it from its checkpoint once the check passes again: it completes.
	healed.Store(true)
	do(t, ctx, "retry from checkpoint", chromedp.Click(chromedp.ID("retry-checkpoint")))
	waitJS(t, ctx, "delta completed", `document.querySelector('[data-testid=tenant]')?.dataset.status === 'COMPLETED'`)
	attempts := do(t, ctx, "its ledger", chromedp.Evaluate[int](`document.querySelectorAll('[data-testid=attempt-row]').length`))
	require.Equal(t, 4, attempts, "push, bake and check's failure from run 1, check from run 2: nothing ran twice")

	// Back on the plan: every cell done, the plan COMPLETED, and still the same page.
	do(t, ctx, "back to the plan", chromedp.Click(chromedp.ID("tenant-plan-link")))
	waitJS(t, ctx, "every cell done", `[...`+cells+`].filter(c => c.dataset.state === 'done').length === 12`)
	waitJS(t, ctx, "the plan completed", `document.querySelector('#plan-head [data-testid=plan-status]')?.textContent.trim() === 'COMPLETED'`)
	waitJS(t, ctx, "the summary counts four past every stage", `document.querySelector('[data-testid=matrix-cell][data-stage-index="3"][data-status=COMPLETED]')?.dataset.count === '4'`)
	require.Equal(t, "none", do(t, ctx, "no failure budget", chromedp.Evaluate[string](`document.querySelector('[data-testid=plan-budget]').textContent`)),
		"a plan without waves nor failureBudget runs every task, whatever fails: its budget reads none, not 0")
	require.Equal(t, "(all stages done)", do(t, ctx, "the row past every stage", chromedp.Evaluate[string](
		`document.querySelector('[data-testid=matrix-row][data-stage-index="3"] th').textContent`)), "no stage name can read so")

	// The plans list shows it, completed, with a full progress bar.
	do(t, ctx, "to the plans list", chromedp.Click(chromedp.ID("nav-plans")))
	waitJS(t, ctx, "the plan listed completed", `document.querySelector('[data-testid=plan-row]')?.dataset.status === 'COMPLETED'`)
	require.True(t, do(t, ctx, "no reload", chromedp.Evaluate[bool](`window.sameDocument === true`)),
		"the console never reloaded the page")

	// The header names the executor serving the console; the executors page lists it.
	waitJS(t, ctx, "the executor's name in the header", `document.querySelector('[data-testid=executor-name]')?.textContent === 'executor: console-1'`)
	do(t, ctx, "to the executors", chromedp.Click(chromedp.ID("nav-executors")))
	waitJS(t, ctx, "this executor listed, alive", `(r => r?.dataset.name === 'console-1' && r.dataset.alive === 'true')(document.querySelector('[data-testid=executor-row][data-self=true]'))`)
	waitJS(t, ctx, "its stage kinds listed", `(document.querySelector('[data-testid=executor-row][data-self=true] [data-testid=executor-kinds]')?.textContent || '').split(', ').includes('http')`)
}
