package orchestrator

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/executor-dev/executor/domain/stage"
)

// A transcript's streams have the secrets read hidden; a tail cut inside a secret's value
// (its front dropped to fit stage.TranscriptMax) has the value's end hidden too.
func TestTranscriptsHideSecretsAlsoWhereTheTailWasCut(t *testing.T) {
	t.Parallel()
	const secret = "pw-51c0ffee-do-not-leak"
	r := &redactor{values: map[string]string{secret: "db-pass"}}
	pad := func(head string) string { // head, then filler up to a cut tail's length
		return head + strings.Repeat(".", stage.TranscriptMax-len(head))
	}
	tests := []struct {
		name, in, want string
	}{
		{"short: the value hidden", "using " + secret + "\n", "using <secret db-pass>\n"},
		{"short: a value's end is output like any other", "leak\n", "leak\n"},
		{"cut inside the value", pad(secret[5:] + " ok"), "<secret db-pass> ok" + pad(secret[5:] + " ok")[len(secret[5:])+3:]},
		{"cut with the value whole", pad(secret + " ok"), "<secret db-pass> ok" + pad(secret + " ok")[len(secret)+3:]},
		{"cut leaving 3 bytes of it", pad("eak ok"), pad("eak ok")},
		{"cut elsewhere", pad("step 3 of 7"), pad("step 3 of 7")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := r.transcript(stage.Transcript{Stdout: tt.in, Stderr: tt.in})
			assert.Equal(t, tt.want, got.Stdout)
			assert.Equal(t, tt.want, got.Stderr)
			assert.NotContains(t, got.Stdout, secret[5:])
		})
	}
}
