package orchestrator

import (
	"strings"
	"unicode/utf8"

	"github.com/executor-dev/executor/domain/stage"
)

// minSecretCut is the shortest end of a secret value a cut tail's start is hidden for: a
// shorter one (1 to 3 bytes) matches the start of arbitrary output too often to be told from
// it.
const minSecretCut = 4

// tail returns one stream of an attempt's transcript with every secret value read replaced
// (text). A stream as long as stage.TranscriptMax allows was cut from its front, maybe inside
// a secret's value: the end of a value it starts with (minSecretCut bytes at least) is
// replaced too.
func (r *redactor) tail(s string) string {
	cut := len(s) > stage.TranscriptMax-utf8.UTFMax
	s = r.text(s)
	if !cut {
		return s
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	longest, name := 0, ""
	for v, n := range r.values {
		for i := 1; len(v)-i >= minSecretCut; i++ { // the value's proper ends, longest first
			if strings.HasPrefix(s, v[i:]) {
				if len(v)-i > longest {
					longest, name = len(v)-i, n
				}
				break
			}
		}
	}
	if longest == 0 {
		return s
	}
	return "<secret " + name + ">" + s[longest:]
}
