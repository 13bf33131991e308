package orchestrator

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	"github.com/executor-dev/executor/domain/stage"
)

// Secrets resolves the secrets stage templates read ({{secret "name"}}): infra/secrets.Dir,
// serve's --secrets-dir.
type Secrets interface {
	// Secret returns the value of secret name.
	Secret(name string) (string, error)
}

// redactor records the secrets one attempt's params read, and hides their values in what the
// attempt leaves behind (its ledger entry, its failure, its output, its log lines): a secret
// reaches the stage's target, never Redis, the API or the logs.
type redactor struct {
	mu     sync.Mutex
	values map[string]string // value → secret name
}

// resolve is the attempt's stage.Data.Secret: nil without Config.Secrets.
func (o *core) resolve(r *redactor) func(name string) (string, error) {
	if o.cfg.Secrets == nil {
		return nil
	}
	return func(name string) (string, error) {
		v, err := o.cfg.Secrets.Secret(name)
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

// text returns s with every secret value read replaced by "<secret NAME>" (as it is, and as
// JSON escapes it).
func (r *redactor) text(s string) string {
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

// output returns the output out with every secret value read replaced, within its JSON
// strings, by "<secret NAME>".
func (r *redactor) output(out json.RawMessage) json.RawMessage {
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

// transcript returns t with every secret value read replaced (tail).
func (r *redactor) transcript(t stage.Transcript) stage.Transcript {
	return stage.Transcript{Stdout: r.tail(t.Stdout), Stderr: r.tail(t.Stderr)}
}
