package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

// status shows what the last attempt of each exec stage printed, under the task, labelled
// and indented, the secret it read hidden; task show shows every attempt's; -o json carries
// them in the ledger.
func TestStatusShowsWhatExecStagesPrinted(t *testing.T) {
	t.Parallel()
	const value = "pw-9d2e77aa-do-not-leak"
	dir, secrets := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(secrets, "db-pass"), []byte(value+"\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "migrate.sh"), []byte(`#!/bin/sh
echo "migrating $EXECUTOR_TENANT_ID with $DB_PASS"
echo "warning: slow disk" >&2
if [ "$EXECUTOR_ATTEMPT" = 1 ]; then echo "cannot reach the database" >&2; exit 75; fi
echo '{"migrated":true}'
`), 0o755))
	allow, err := stagekind.ParseExecAllow([]string{dir + "/"})
	require.NoError(t, err)
	srv := servertest.With(t, server.Config{ExecAllow: allow, SecretsDir: secrets})
	file := writePlan(t, "migrate", []string{"so-1"}, wire.StageRequest{Name: "migrate", Kind: "exec",
		Retry:  &wire.RetryRequest{MaxAttempts: 2, InitialBackoff: "10ms"},
		Params: map[string]any{"command": filepath.Join(dir, "migrate.sh"), "env": map[string]any{"DB_PASS": `{{secret "db-pass"}}`}}})
	requireCode(t, cli.ExitOK, runCLI(t, srv.URL(), "submit", "-f", file, "--wait"))

	r := runCLI(t, srv.URL(), "status", "--tenant", "so-1")
	requireCode(t, cli.ExitOK, r)
	assert.Contains(t, r.stdout, "\noutput of stage migrate (1/1), run 1, attempt 2 (succeeded):\n"+
		"  stdout:\n    migrating so-1 with <secret db-pass>\n    {\"migrated\":true}\n"+
		"  stderr:\n    warning: slow disk\n")
	assert.NotContains(t, r.stdout, "cannot reach the database", "status: the last attempt of each stage")
	assert.NotContains(t, r.stdout, value)

	task := decode[wire.Task](t, runCLI(t, srv.URL(), "status", "--tenant", "so-1", "-o", "json").stdout)
	require.Len(t, task.Attempts, 2)
	assert.Equal(t, "warning: slow disk\ncannot reach the database\n", task.Attempts[0].Stderr)

	r = runCLI(t, srv.URL(), "task", "show", task.TaskID)
	requireCode(t, cli.ExitOK, r)
	assert.Contains(t, r.stdout, "output of stage migrate (1/1), run 1, attempt 1 (failed):\n"+
		"  stdout:\n    migrating so-1 with <secret db-pass>\n  stderr:\n    warning: slow disk\n    cannot reach the database\n")
	assert.Contains(t, r.stdout, "output of stage migrate (1/1), run 1, attempt 2 (succeeded):")
	assert.NotContains(t, r.stdout, value)
}
