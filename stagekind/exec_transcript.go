package stagekind

import (
	"unicode/utf8"

	"github.com/executor-dev/executor/domain/stage"
)

// transcript is what the attempt printed, for its ledger entry: the last stage.TranscriptMax
// bytes of stdout and of stderr, each starting on a character's first byte.
func (res execResult) transcript() stage.Transcript {
	return stage.Transcript{
		Stdout: runeStart(res.stdout.last(stage.TranscriptMax)),
		Stderr: runeStart(res.stderr.last(stage.TranscriptMax)),
	}
}

// runeStart returns b as a string without the bytes, at most three, of a UTF-8 character
// whose start the cut of a tail dropped.
func runeStart(b []byte) string {
	for n := 0; n < utf8.UTFMax-1 && len(b) > 0 && !utf8.RuneStart(b[0]); n++ {
		b = b[1:]
	}
	return string(b)
}
