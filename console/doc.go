// Package console is the SRE web console of the executor: one page of plain HTML, CSS and
// vanilla JavaScript that drives the HTTP API (docs/api.md) from the browser. It lists
// plans, shows a plan as its summary (counts by status, by stage and status, by failure
// class, its gates) and a filtered, paged list of its tenants, live from GET /v1/events,
// acts on every task matching the list's filter (approve, reject, retry, cancel), looks up a
// tenant's latest task, checkpoint and attempt ledger, submits plans (YAML or JSON, with a
// dry run), and pauses, resumes, cancels and retries plans and tenants.
//
// Handler serves it: GET / answers static/index.html and GET /assets/<name> the files under
// static/assets (app.js: the helpers, the routing and every view but the plan page, which is
// plan.js; style.css); anything else is a 404. api.Options.Console mounts it next to the API.
//
// The plan page reads a few hundred bytes of summary and one page of 100 tenants whatever the
// plan's size, never the plan's every task: at 100,000 tenants it shows in under 200 KB with
// about a hundred table rows (docs/console.md, server/console_scale_browser_test.go).
//
// LoginPage writes static/login.html, the form the API shows instead of the console while
// auth is enabled and the browser holds no valid token (docs/console.md, Logging in). The
// console's scripts send X-Executor-Console: 1 with every API call, reload the page when the
// API answers 401, and show the token's role (X-Executor-Role) next to a log-out button.
//
// Invariants (console_test.go checks them):
//   - every asset is embedded in the binary (go:embed): no build step, no npm, no files
//     read at run time;
//   - no external URL: the page loads only /assets/... and calls only the API of the
//     server that served it (relative /v1/... paths), so it works offline; the
//     Content-Security-Policy header enforces it in the browser;
//   - each file is served with its Content-Type, nosniff, and Cache-Control: no-cache (the
//     files are not versioned by name; the ETag makes revalidation cheap).
package console
