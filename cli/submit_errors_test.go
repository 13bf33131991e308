package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/wire"
)

func TestSubmitSaysWhenItReplays(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	file := writePlan(t, "replay", []string{"rp1"}, noop("a"))
	other := writePlan(t, "replay", []string{"rp1"}, noop("b"))

	first := runCLI(t, srv.URL(), "submit", "-f", file, "--idempotency-key", "release-7", "-o", "json")
	requireCode(t, cli.ExitOK, first)
	assert.Empty(t, first.stderr, "a new plan is not a replay")
	id := decode[wire.Plan](t, first.stdout).PlanID

	for _, output := range []string{"table", "json"} {
		r := runCLI(t, srv.URL(), "-o", output, "submit", "-f", file, "--idempotency-key", "release-7")
		requireCode(t, cli.ExitOK, r)
		assert.Equal(t, "plan "+id+" replayed: this Idempotency-Key was submitted before with the same plan; nothing new was started\n",
			r.stderr, "-o %s", output)
		assert.Contains(t, r.stdout, id, "the first plan is printed")
	}

	r := runCLI(t, srv.URL(), "submit", "-f", other, "--idempotency-key", "release-7")
	requireCode(t, cli.ExitFailure, r)
	requireErrorLine(t, r)
	assert.Contains(t, r.stderr, "422", "another plan under the key is refused")
	assert.Contains(t, r.stderr, "(field: Idempotency-Key)")
	assert.Empty(t, r.stdout)
}

func TestSubmitPrintsEveryInvalidField(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	file := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(file, []byte(`{
	  "colour": "blue",
	  "stages": [
	    {"name": "a", "kind": "noop", "params": {"x": "{{.Params.nope}}"}},
	    {"name": "b", "kind": "noop", "params": {"y": "{{index .Outputs \"later\" \"k\"}}"}}
	  ],
	  "tenants": [{"id": "ok-1"}, {"id": "bad id"}]
	}`), 0o600))
	want := []string{"colour", "stages[0].params.x", "stages[1].params.y", "tenants[1].id"}

	r := runCLI(t, srv.URL(), "submit", "-f", file)
	requireCode(t, cli.ExitFailure, r)
	assert.Empty(t, r.stdout)
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	require.Len(t, lines, 1+len(want), "stderr: %s", r.stderr)
	assert.Equal(t, "error: 400 Bad Request: the plan has 4 invalid fields:", lines[0])
	var fields []string
	for _, l := range lines[1:] {
		field, _, ok := strings.Cut(strings.TrimPrefix(l, "  "), ": ")
		require.True(t, ok && strings.HasPrefix(l, "  "), "a field per line: %q", l)
		fields = append(fields, field)
	}
	assert.ElementsMatch(t, want, fields)
	assert.NotContains(t, r.stderr, "more)", "nothing is left out")

	asJSON := runCLI(t, srv.URL(), "submit", "-f", file, "-o", "json")
	requireCode(t, cli.ExitFailure, asJSON)
	assert.Empty(t, asJSON.stdout, "errors go to stderr, as for every command")
	doc := requireErrorDoc(t, asJSON)
	assert.Equal(t, 400, doc.Error.Status)
	assert.Equal(t, "invalid-input", doc.Error.Code)
	assert.Equal(t, strings.TrimPrefix(lines[0], "error: "), doc.Error.Message)
	var docFields []string
	for _, f := range doc.Error.Fields {
		docFields = append(docFields, f.Field)
	}
	assert.ElementsMatch(t, want, docFields, "-o json lists every field, as data")
	assert.Len(t, doc.Error.Hints, len(want), "and as the lines the table output prints")
}

// A plan file that is not valid YAML is refused before anything is sent, the error naming the
// file and the line of the mistake (a list item mis-indented on line 5 of a list that begins on
// line 2), with a hint for a template holding double quotes in a double-quoted string.
func TestSubmitNamesTheFileAndLineOfAYAMLMistake(t *testing.T) {
	t.Parallel()
	const unreachable = "http://127.0.0.1:1" // nothing is sent
	tests := []struct {
		name, doc, want string
	}{
		{"a list item indented too far", "name: p\nstages:\n  - name: a\n    kind: noop\n   - name: b\n    kind: noop\ntenants:\n  - id: t\n",
			"line 5: did not find expected '-' indicator"},
		{"a template with double quotes in double quotes", "name: p\nstages:\n  - name: a\n    kind: http\n    params:\n      url: \"{{ index .Params \"k\" }}\"\ntenants:\n  - id: t\n",
			`line 6: did not find expected key (a template in a double-quoted string cannot hold a double quote: quote the value with single quotes instead, as in '{{ index .Params "k" }}', or escape the inner quotes as \")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "plan.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tt.doc), 0o600))
			for _, args := range [][]string{{"submit", "-f", path}, {"submit", "-f", path, "--dry-run"}} {
				r := runCLI(t, unreachable, args...)
				requireCode(t, cli.ExitFailure, r)
				assert.Equal(t, "error: "+path+": "+tt.want+"\n", r.stderr)
				assert.Empty(t, r.stdout)
			}
			var stdout, stderr strings.Builder
			code := cli.RunWith(context.Background(), []string{"--server", unreachable, "submit", "-f", "-"}, strings.NewReader(tt.doc), nil, &stdout, &stderr)
			assert.Equal(t, cli.ExitFailure, code)
			assert.Equal(t, "error: standard input: "+tt.want+"\n", stderr.String())
		})
	}
}

// A maxConcurrency above the executor's workers is not refused, but the submission says on
// stderr that this executor caps it (a dry run too), and stdout keeps the answer alone.
func TestSubmitNotesAMaxConcurrencyAboveTheWorkers(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	req := wire.PlanRequest{Name: "wide", MaxConcurrency: 500, Stages: []wire.StageRequest{noop("a")}, Tenants: []wire.TenantRequest{{ID: "wide-1"}}}
	b, err := json.Marshal(req)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "wide.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	for _, args := range [][]string{{"submit", "-f", path, "--dry-run"}, {"submit", "-f", path, "-o", "json"}} {
		r := runCLI(t, srv.URL(), args...)
		requireCode(t, cli.ExitOK, r)
		assert.Regexp(t, `^note: maxConcurrency 500 is above this executor's \d+ workers \(serve --workers\): it runs at most \d+ of the plan's tasks at once`, r.stderr)
		assert.NotContains(t, r.stdout, "note:")
	}
}

// A submission, or its dry run, refused for a tenant whose task has not ended names the plan
// holding it and its status, and says what to do.
func TestSubmitConflictNamesThePlanHoldingTheTenant(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	long := writePlan(t, "holder", []string{"hc1"}, sleep("bake", "1m"))
	again := writePlan(t, "again", []string{"hc1", "hc2"}, noop("a"))
	r := runCLI(t, srv.URL(), "submit", "-f", long, "-o", "json")
	requireCode(t, cli.ExitOK, r)
	holder := decode[wire.Plan](t, r.stdout).PlanID
	require.Eventually(t, func() bool {
		s := runCLI(t, srv.URL(), "status", "--tenant", "hc1", "-o", "json")
		return s.code == cli.ExitOK && decode[wire.Task](t, s.stdout).Status == "RUNNING"
	}, 10*time.Second, 10*time.Millisecond)
	what := "tenant hc1 (plan " + holder + ", RUNNING); wait until those tasks end, or cancel them: " +
		"'executor cancel --tenant hc1' for one tenant, 'executor plan bulk cancel " + holder + " --tenant PREFIX' for those of a plan\n"

	r = runCLI(t, srv.URL(), "submit", "-f", again, "--dry-run", "-o", "json")
	requireCode(t, cli.ExitFailure, r)
	dry := decode[wire.DryRun](t, r.stdout)
	require.Len(t, dry.ConflictTasks, 1)
	assert.Equal(t, wire.ConflictTask{TenantID: "hc1", PlanID: holder, TaskID: dry.ConflictTasks[0].TaskID, Status: "RUNNING"}, dry.ConflictTasks[0])
	r = runCLI(t, srv.URL(), "submit", "-f", again, "--dry-run")
	requireCode(t, cli.ExitFailure, r)
	assert.Equal(t, "error: dry run: tenants have a task that has not ended: "+what, r.stderr)

	r = runCLI(t, srv.URL(), "submit", "-f", again)
	requireCode(t, cli.ExitFailure, r)
	assert.Equal(t, "error: 409 Conflict: tenants have a task that has not ended: "+what, r.stderr)
}
