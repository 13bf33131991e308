package stage_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
)

// redactorWith is a Redactor that read secret as db-pass.
func redactorWith(t *testing.T, secret string) *stage.Redactor {
	t.Helper()
	r := &stage.Redactor{}
	resolve := r.Resolver(func(name string) (string, error) { return secret, nil })
	v, err := resolve("db-pass")
	require.NoError(t, err)
	require.Equal(t, secret, v, "the stage gets the value")
	return r
}

// A transcript's streams have the secrets read hidden; a tail cut inside a secret's value
// (its front dropped to fit stage.TranscriptMax) has the value's end hidden too.
func TestTranscriptsHideSecretsAlsoWhereTheTailWasCut(t *testing.T) {
	t.Parallel()
	const secret = "pw-51c0ffee-do-not-leak"
	r := redactorWith(t, secret)
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
			got := r.Transcript(stage.Transcript{Stdout: tt.in, Stderr: tt.in})
			assert.Equal(t, tt.want, got.Stdout)
			assert.Equal(t, tt.want, got.Stderr)
			assert.NotContains(t, got.Stdout, secret[5:])
		})
	}
}

// Text and Output hide a value read as it is and as JSON escapes it; without secrets the
// resolver stays nil.
func TestRedactorHidesWhatWasRead(t *testing.T) {
	t.Parallel()
	const secret = `pa"ss<word>`
	r := redactorWith(t, secret)
	assert.Equal(t, "auth <secret db-pass> refused", r.Text("auth "+secret+" refused"))
	out, err := json.Marshal(map[string]string{"token": secret})
	require.NoError(t, err)
	assert.JSONEq(t, `{"token":"<secret db-pass>"}`, string(r.Output(out)))
	assert.Nil(t, (&stage.Redactor{}).Resolver(nil))
}
