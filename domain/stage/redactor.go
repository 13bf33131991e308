package stage

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"unicode/utf8"
)

// Redactor records the secrets a render read ({{secret "name"}}) and hides their values in
// what is left behind (a failure, an output, a transcript, a log line, a dry run's
// measurement): a secret reaches the stage's target, never a store, the API or the logs. The
// zero value is ready to use and safe for concurrent use.
type Redactor struct {
	mu     sync.Mutex
	values map[string]string // value → secret name
}

// Resolver wraps resolve (a Data.Secret): each value it returns is recorded. Nil stays nil
// (no secrets).
func (r *Redactor) Resolver(resolve func(name string) (string, error)) func(name string) (string, error) {
	if resolve == nil {
		return nil
	}
	return func(name string) (string, error) {
		v, err := resolve(name)
		if err == nil && v != "" {
			r.mu.Lock()
			if r.values == nil {
				r.values = map[string]string{}
			}
			r.values[v] = name
			r.mu.Unlock()
		}
		return v, err
	}
}

// Text returns s with every secret value read replaced by "<secret NAME>" (as it is, and as
// JSON escapes it).
func (r *Redactor) Text(s string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for v, name := range r.values {
		s = strings.ReplaceAll(s, v, "<secret "+name+">")
		if esc := escaped(v); esc != v {
			s = strings.ReplaceAll(s, esc, "<secret "+name+">")
		}
	}
	return s
}

// Output returns the output out with every secret value read replaced, within its JSON
// strings, by "<secret NAME>".
func (r *Redactor) Output(out json.RawMessage) json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	for v, name := range r.values {
		out = bytes.ReplaceAll(out, []byte(escaped(v)), []byte("<secret "+name+">"))
	}
	return out
}

// escaped is v as it appears inside a JSON string.
func escaped(v string) string {
	b, _ := json.Marshal(v) // a string always marshals
	return string(b[1 : len(b)-1])
}

// Transcript returns t with every secret value read replaced (see tail).
func (r *Redactor) Transcript(t Transcript) Transcript {
	return Transcript{Stdout: r.tail(t.Stdout), Stderr: r.tail(t.Stderr)}
}

// minSecretCut is the shortest end of a secret value a cut tail's start is hidden for: a
// shorter one (1 to 3 bytes) matches the start of arbitrary output too often to be told from
// it.
const minSecretCut = 4

// tail returns one stream of an attempt's transcript with every secret value read replaced
// (Text). A stream as long as TranscriptMax allows was cut from its front, maybe inside a
// secret's value: the end of a value it starts with (minSecretCut bytes at least) is
// replaced too.
func (r *Redactor) tail(s string) string {
	cut := len(s) > TranscriptMax-utf8.UTFMax
	s = r.Text(s)
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
