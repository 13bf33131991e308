package secrets_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/secrets"
)

func TestDirReadsOneFilePerSecretAtEachUse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "api-token"), []byte("tok-1\n"), 0o600))
	d, err := secrets.Open(dir)
	require.NoError(t, err)
	v, err := d.Secret("api-token")
	require.NoError(t, err)
	assert.Equal(t, "tok-1", v, "one trailing newline removed")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "api-token"), []byte("tok-2"), 0o600))
	v, err = d.Secret("api-token")
	require.NoError(t, err)
	assert.Equal(t, "tok-2", v, "a rotated secret is read again")

	_, err = d.Secret("missing")
	require.ErrorIs(t, err, secrets.ErrNotFound)
	for _, name := range []string{"../etc/passwd", "a/b", "", ".hidden"} {
		_, err = d.Secret(name)
		require.Error(t, err, name)
		assert.NotErrorIs(t, err, secrets.ErrNotFound, name)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big"), []byte(strings.Repeat("x", secrets.MaxSize+1)), 0o600))
	_, err = d.Secret("big")
	require.Error(t, err)

	_, err = secrets.Open(filepath.Join(dir, "api-token"))
	require.Error(t, err, "not a directory")
}
