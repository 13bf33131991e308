package cli_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/auth"
	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// Secrets of the audit tests' named tokens.
const (
	auditAlice = "audit-alice-0123456789abcdef"
	auditBob   = "audit-bob-0123456789abcdef"
)

// auditServer starts an executor whose tokens name alice and bob (both operate), where bob
// submitted a plan of one tenant whose one stage sleeps for longer than the test; it returns
// the executor's URL and the plan's id.
func auditServer(t *testing.T, tenant string) (string, string) {
	t.Helper()
	srv := servertest.With(t, server.Config{Tokens: []auth.Token{
		{Role: auth.RoleOperate, Name: "alice", Secret: auditAlice}, {Role: auth.RoleOperate, Name: "bob", Secret: auditBob},
	}})
	r := runCLI(t, srv.URL(), "--token", auditBob, "-o", "json", "submit", "-f", writePlan(t, "audited", []string{tenant}, sleep("bake", "10m")))
	requireCode(t, cli.ExitOK, r)
	return srv.URL(), decode[wire.Plan](t, r.stdout).PlanID
}

// auditActions has alice pause and resume the plan, then approve the tenant's task, which
// waits at no gate: that one is refused. Newest first, the trail then reads approve, resume,
// pause, then bob's submit.
func auditActions(t *testing.T, url, planID, tenant string) {
	t.Helper()
	for _, args := range [][]string{{"plan", "pause", planID}, {"plan", "resume", planID}} {
		requireCode(t, cli.ExitOK, runCLI(t, url, append([]string{"--token", auditAlice}, args...)...))
	}
	r := runCLI(t, url, "--token", auditAlice, "approve", "--tenant", tenant, "--comment", "looks fine")
	requireCode(t, cli.ExitFailure, r)
	require.Contains(t, r.stderr, "409", "approving a task that waits at no gate is refused")
}

// `executor audit --plan P` prints one line per action, newest first: its time, actor, role,
// action, target, result (a refusal with its code) and details (the comment quoted, the
// outcome after →); --actor keeps one holder's.
func TestAuditTable(t *testing.T) {
	t.Parallel()
	url, planID := auditServer(t, "audit-t1")
	auditActions(t, url, planID, "audit-t1")

	r := runCLI(t, url, "--token", auditAlice, "audit", "--plan", planID)
	requireCode(t, cli.ExitOK, r)
	assert.Empty(t, r.stderr, "one page holds them all: no cursor to go on with")
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	require.Len(t, lines, 5, "a header and four actions:\n%s", r.stdout)
	assert.Equal(t, []string{"TIME", "ACTOR", "ROLE", "ACTION", "TARGET", "RESULT", "DETAILS"}, strings.Fields(lines[0]))
	short := planID[:10] + "…"
	tests := []struct {
		name string
		line string
		want []string // the line's first six columns
		has  string   // in its details
	}{
		{"a refused approve", lines[1], []string{"alice", "operate", "approve", "audit-t1", "refused:"}, `comment="looks fine"`},
		{"the resume", lines[2], []string{"alice", "operate", "resume", short, "applied"}, "→ status="},
		{"the pause", lines[3], []string{"alice", "operate", "pause", short, "applied"}, "→ status=PAUSED"},
		{"bob's submit", lines[4], []string{"bob", "operate", "submit", short, "applied"}, "name=audited tenants=1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fields := strings.Fields(tc.line)
			require.GreaterOrEqual(t, len(fields), 7, "line %q", tc.line)
			assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`, fields[0], "RFC 3339 in UTC, to the second")
			assert.Equal(t, tc.want, fields[1:6])
			assert.Contains(t, tc.line, tc.has)
		})
	}
	assert.Regexp(t, `refused: [a-z-]+\s`, lines[1], "a refusal names its code")

	r = runCLI(t, url, "--token", auditAlice, "audit", "--plan", planID, "--actor", "bob")
	requireCode(t, cli.ExitOK, r)
	lines = strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	require.Len(t, lines, 2, "bob's submit only:\n%s", r.stdout)
	assert.Equal(t, []string{"bob", "operate", "submit"}, strings.Fields(lines[1])[1:4])
}

// -o json prints the API's page; --limit 1 prints one record and the --cursor of the next
// page on stderr, which lists the next record; --all follows every cursor, and with -o json
// prints one page of every record, without a nextCursor.
func TestAuditPaging(t *testing.T) {
	t.Parallel()
	url, planID := auditServer(t, "audit-p1")
	auditActions(t, url, planID, "audit-p1")
	actions := func(p wire.AuditPage) []string {
		var out []string
		for _, r := range p.Records {
			out = append(out, r.Actor+" "+r.Action+" "+r.Result)
		}
		return out
	}
	want := []string{"alice approve refused", "alice resume applied", "alice pause applied", "bob submit applied"}

	r := runCLI(t, url, "--token", auditAlice, "-o", "json", "audit", "--plan", planID)
	requireCode(t, cli.ExitOK, r)
	page := decode[wire.AuditPage](t, r.stdout)
	assert.Equal(t, want, actions(page))
	assert.Empty(t, page.NextCursor)
	assert.Equal(t, map[string]string{"comment": "looks fine"}, page.Records[0].Request)
	assert.NotEmpty(t, page.Records[0].Code)
	assert.Equal(t, planID, page.Records[3].PlanID)

	r = runCLI(t, url, "--token", auditAlice, "audit", "--plan", planID, "--limit", "1")
	requireCode(t, cli.ExitOK, r)
	require.Len(t, strings.Split(strings.TrimRight(r.stdout, "\n"), "\n"), 2, "a header and one record:\n%s", r.stdout)
	cursor, ok := strings.CutPrefix(strings.TrimSpace(r.stderr), "more records: --cursor ")
	require.True(t, ok, "stderr names the next page's cursor: %q", r.stderr)
	r = runCLI(t, url, "--token", auditAlice, "-o", "json", "audit", "--plan", planID, "--limit", "1", "--cursor", cursor)
	requireCode(t, cli.ExitOK, r)
	assert.Empty(t, r.stderr, "-o json carries the cursor in the page")
	page = decode[wire.AuditPage](t, r.stdout)
	assert.Equal(t, want[1:2], actions(page))
	assert.NotEmpty(t, page.NextCursor)

	r = runCLI(t, url, "--token", auditAlice, "-o", "json", "audit", "--plan", planID, "--limit", "1", "--all")
	requireCode(t, cli.ExitOK, r)
	assert.Empty(t, r.stderr)
	page = decode[wire.AuditPage](t, r.stdout)
	assert.Equal(t, want, actions(page))
	assert.Empty(t, page.NextCursor, "every page was read")

	r = runCLI(t, url, "--token", auditAlice, "audit", "--plan", planID, "--limit", "1", "--all")
	requireCode(t, cli.ExitOK, r)
	assert.Len(t, strings.Split(strings.TrimRight(r.stdout, "\n"), "\n"), 5, "one table of every page:\n%s", r.stdout)
	assert.Empty(t, r.stderr)
}

// --all stops after 100 pages, printing what it read and, on stderr, the cursor that goes on.
func TestAuditAllIsBounded(t *testing.T) {
	t.Parallel()
	url, planID := auditServer(t, "audit-b1")
	api := client.New(url, auditAlice, nil)
	for range 100 { // refused approves: each one is recorded
		err := api.Call(context.Background(), "POST", "/v1/tenants/audit-b1/approve", wire.DecisionBody{}, nil)
		require.Equal(t, 409, client.StatusCode(err), "%v", err)
	}

	r := runCLI(t, url, "--token", auditAlice, "-o", "json", "audit", "--plan", planID, "--limit", "1", "--all")
	requireCode(t, cli.ExitOK, r)
	page := decode[wire.AuditPage](t, r.stdout)
	assert.Len(t, page.Records, 100)
	require.NotEmpty(t, page.NextCursor, "the submit is left")
	assert.Equal(t, "stopped after 100 pages (100 records); more records: --cursor "+page.NextCursor+"\n", r.stderr)

	r = runCLI(t, url, "--token", auditAlice, "-o", "json", "audit", "--plan", planID, "--limit", "1", "--cursor", page.NextCursor, "--all")
	requireCode(t, cli.ExitOK, r)
	rest := decode[wire.AuditPage](t, r.stdout)
	require.Len(t, rest.Records, 1)
	assert.Equal(t, "submit", rest.Records[0].Action)
	assert.Empty(t, rest.NextCursor)
}

// Bad flags are usage errors naming the flag (exit 2); a plan id the API refuses is its 400,
// naming plan (exit 1).
func TestAuditErrors(t *testing.T) {
	t.Parallel()
	url, _ := auditServer(t, "audit-e1")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"a zero limit", []string{"--limit", "0"}, cli.ExitUsage, "--limit"},
		{"a limit above the maximum", []string{"--limit", "1001"}, cli.ExitUsage, "--limit 1001: want 1 to 1000"},
		{"a limit that is no number", []string{"--limit", "ten"}, cli.ExitUsage, "--limit"},
		{"an empty plan", []string{"--plan", ""}, cli.ExitUsage, "--plan"},
		{"an empty actor", []string{"--actor="}, cli.ExitUsage, "--actor"},
		{"an argument", []string{"01JD0000000000000000000000"}, cli.ExitUsage, "unexpected argument"},
		{"a plan id that is no ULID", []string{"--plan", "not-a-plan"}, cli.ExitFailure, "400 Bad Request"},
		{"a cursor of no page", []string{"--cursor", "nope"}, cli.ExitFailure, "(field: cursor)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, url, append([]string{"--token", auditAlice, "audit"}, tc.args...)...)
			requireCode(t, tc.code, r)
			requireErrorLine(t, r)
			assert.Empty(t, r.stdout)
			assert.Contains(t, r.stderr, tc.want)
		})
	}
	r := runCLI(t, url, "--token", auditAlice, "audit", "--plan", "not-a-plan")
	assert.Contains(t, r.stderr, "(field: plan)", "the API's 400 names plan")
}
