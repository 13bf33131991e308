// Package console is the SRE web console of the executor: one page of plain HTML, CSS and
// vanilla JavaScript that drives the HTTP API (docs/api.md) from the browser. It lists
// plans, shows a plan's tenant × stage matrix live from GET /v1/events, looks up a tenant's
// latest task, checkpoint and attempt ledger, submits plans (YAML or JSON, with a dry run),
// and pauses, resumes, cancels and retries plans and tenants.
//
// Handler serves it: GET / answers static/index.html and GET /assets/<name> the files under
// static/assets; anything else is a 404. api.Options.Console mounts it next to the API.
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
