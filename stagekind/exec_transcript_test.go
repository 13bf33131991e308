package stagekind_test

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/stagekind"
)

// Every run of the command hands the ends of its stdout and stderr to Transcribe, once,
// however it ended: an exit 0, a failure, a timeout (its process group killed).
func TestExecTranscribesTheTailsOfEveryRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// 5,000 lines of "line N": far more than TranscriptMax of each stream.
	const flood = `i=0; while [ $i -lt 5000 ]; do echo "line $i"; echo "err $i" >&2; i=$((i+1)); done`
	tests := []struct {
		name, body       string
		timeout          time.Duration
		wantErr          bool
		stdoutEnd        string
		stderrEnd        string
		stdoutHasNoStart bool // the tail was cut: its first lines are gone
	}{
		{name: "success", body: `echo "migrating"; echo "warning: slow disk" >&2; echo '{"ok":true}'`,
			stdoutEnd: "migrating\n{\"ok\":true}\n", stderrEnd: "warning: slow disk\n"},
		{name: "failure", body: `echo "step 1 done"; echo "cannot reach the cluster" >&2; exit 3`,
			wantErr: true, stdoutEnd: "step 1 done\n", stderrEnd: "cannot reach the cluster\n"},
		{name: "more than the tail", body: flood + `; exit 1`,
			wantErr: true, stdoutEnd: "line 4999\n", stderrEnd: "err 4999\n", stdoutHasNoStart: true},
		{name: "timed out", body: `echo "waiting for the lock"; echo "still locked" >&2; sleep 300`,
			timeout: 300 * time.Millisecond, wantErr: true, stdoutEnd: "waiting for the lock\n", stderrEnd: "still locked\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := script(t, dir, strings.ReplaceAll(tt.name, " ", "-")+".sh", tt.body)
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			var got []stage.Transcript
			req := execRequest(map[string]any{"command": cmd, "killGrace": "100ms"})
			req.Transcribe = func(tr stage.Transcript) { got = append(got, tr) }
			_, err := execKind(t, dir, stagekind.ExecOptions{}).Run(ctx, req)
			if tt.wantErr {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			require.Len(t, got, 1, "one transcript per run")
			tr := got[0]
			assert.True(t, strings.HasSuffix(tr.Stdout, tt.stdoutEnd), "stdout ends with %q: %q", tt.stdoutEnd, tr.Stdout)
			assert.True(t, strings.HasSuffix(tr.Stderr, tt.stderrEnd), "stderr ends with %q: %q", tt.stderrEnd, tr.Stderr)
			assert.LessOrEqual(t, len(tr.Stdout), stage.TranscriptMax)
			assert.LessOrEqual(t, len(tr.Stderr), stage.TranscriptMax)
			if tt.stdoutHasNoStart {
				assert.NotContains(t, tr.Stdout, "line 0\n")
				assert.Greater(t, len(tr.Stdout), stage.TranscriptMax-16, "the tail is as long as allowed")
				assert.Greater(t, len(tr.Stderr), stage.TranscriptMax-16, "stderr's tail too, not only the failure message's")
			}
		})
	}
}

// A tail cut inside a multi-byte character starts at the next whole one.
func TestExecTranscriptStartsOnACharacter(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// 3,000 "é" (2 bytes each), then nothing or one "x": with the "x", the cut falls inside a
	// character. Either way the tail is valid UTF-8.
	for _, trail := range []string{"", "x"} {
		cmd := script(t, dir, "accents"+trail+".sh", `i=0; while [ $i -lt 3000 ]; do printf 'é'; i=$((i+1)); done; printf '`+trail+`'`)
		var got stage.Transcript
		req := execRequest(map[string]any{"command": cmd})
		req.Transcribe = func(tr stage.Transcript) { got = tr }
		_, err := execKind(t, dir, stagekind.ExecOptions{}).Run(context.Background(), req)
		require.NoError(t, err)
		assert.True(t, utf8.ValidString(got.Stdout), "trail %q: %q…", trail, got.Stdout[:8])
		assert.True(t, strings.HasPrefix(got.Stdout, "é"))
		assert.True(t, strings.HasSuffix(got.Stdout, "é"+trail))
		assert.GreaterOrEqual(t, len(got.Stdout), stage.TranscriptMax-1)
	}
}
