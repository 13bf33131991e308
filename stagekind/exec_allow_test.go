package stagekind_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/stagekind"
)

// A bare command name is looked up in the allow-list's directories, in order, and then its
// files: a plan names a script, each executor finds it where it is installed.
func TestExecFindsABareNameInTheAllowList(t *testing.T) {
	t.Parallel()
	first, second, files := t.TempDir(), t.TempDir(), t.TempDir()
	script(t, second, "deploy.sh", `echo '{"from":"second"}'`)
	script(t, first, "deploy.sh", `echo '{"from":"first"}'`)
	require.NoError(t, os.WriteFile(filepath.Join(first, "notes.sh"), []byte("#!/bin/sh\n"), 0o644)) // not executable
	script(t, second, "notes.sh", `echo '{"from":"second notes"}'`)
	only := script(t, files, "only.sh", `echo '{"from":"a file"}'`)
	allow, err := stagekind.ParseExecAllow([]string{first + "/", second + "/", only})
	require.NoError(t, err)
	kind := stagekind.NewExec(stagekind.ExecOptions{Allow: allow})

	tests := []struct {
		command string
		want    string
	}{
		{"deploy.sh", `{"from":"first"}`},
		{"notes.sh", `{"from":"second notes"}`},
		{"only.sh", `{"from":"a file"}`},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			t.Parallel()
			params := map[string]any{"command": tt.command}
			require.NoError(t, kind.ValidateParams(params))
			assert.True(t, kind.Accepts(params))
			out, err := kind.Run(context.Background(), execRequest(params))
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(out))
		})
	}
	params := map[string]any{"command": "missing.sh"}
	require.ErrorIs(t, kind.ValidateParams(params), stagekind.ErrExecDenied)
	assert.False(t, kind.Accepts(params), "an executor without the script leaves the plan to others")
}
