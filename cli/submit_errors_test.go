package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	assert.Equal(t, r.stderr, asJSON.stderr, "-o json lists every field too")
}
