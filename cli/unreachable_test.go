package cli

import (
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// closedURL is the URL of a loopback port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	return url
}

// When the CLI cannot connect to the executor (nothing listens, no such host), its one error
// line asks whether an executor serves at the URL it used and says how to point it at one;
// an executor's answer, or a connection it dropped, gets no such hint.
func TestUnreachableExecutorHint(t *testing.T) {
	t.Parallel()
	closed, dropping, serving := closedURL(t), unusedURL(t), startTestServer(t)
	hint := func(url string) string {
		return "; is an executor serving at " + url + "? point the client at one with --server URL or EXECUTOR_SERVER"
	}
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		hint  string // "" : none
		cause string
	}{
		{name: "connection refused, --server", args: []string{"--server", closed, "plan", "list"}, hint: hint(closed), cause: "connection refused"},
		{name: "connection refused, EXECUTOR_SERVER", env: map[string]string{EnvServer: closed},
			args: []string{"status", "--tenant", "a"}, hint: hint(closed), cause: "connection refused"},
		{name: "no such host", args: []string{"--server", "http://executor.invalid:8080", "plan", "list"},
			hint: hint("http://executor.invalid:8080"), cause: "executor.invalid"},
		{name: "a rollout command", args: []string{"--server", closed, "lock", "--tenant", "a"}, hint: hint(closed), cause: "connection refused"},
		{name: "connection dropped", args: []string{"--server", dropping, "plan", "list"}},
		{name: "an executor's answer", args: []string{"--server", serving, "plan", "show", "01JD0000000000000000000000"}, cause: "404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := runWith(t, "", tt.env, tt.args...)
			require.Equal(t, ExitFailure, o.code, "stderr: %s", o.stderr)
			lines := strings.Split(strings.TrimRight(o.stderr, "\n"), "\n")
			require.Len(t, lines, 1, "one error line: %q", o.stderr)
			assert.True(t, strings.HasPrefix(lines[0], "error: "), lines[0])
			assert.Contains(t, lines[0], tt.cause)
			if tt.hint == "" {
				assert.NotContains(t, lines[0], "is an executor serving at")
				return
			}
			assert.True(t, strings.HasSuffix(lines[0], tt.hint), "stderr: %q", lines[0])
		})
	}
}
