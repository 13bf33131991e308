package stage

import (
	"fmt"
	"text/template"
)

// fnSecret is the template function that reads a secret: {{secret "name"}}.
const fnSecret = "secret"

// secretError is what {{secret}} fails with: Render reports it as ErrSecret.
type secretError struct{ msg string }

func (e *secretError) Error() string { return e.msg }

// noSecrets is {{secret}} in a parsed template before withSecrets binds a resolver to it.
func noSecrets(name string) (string, error) {
	return "", &secretError{msg: fmt.Sprintf("secret %q: no secrets on this executor (serve --secrets-dir)", name)}
}

// withSecrets returns a copy of t whose {{secret}} calls resolve (nil: no secrets).
func withSecrets(t *template.Template, resolve func(name string) (string, error)) *template.Template {
	c, err := t.Clone()
	if err != nil { // a template executed before: cannot happen, t is only ever parsed and cloned
		return t
	}
	fn := noSecrets
	if resolve != nil {
		fn = func(name string) (string, error) {
			v, err := resolve(name)
			if err != nil {
				return "", &secretError{msg: fmt.Sprintf("secret %q: %v", name, err)}
			}
			return v, nil
		}
	}
	return c.Funcs(template.FuncMap{fnSecret: fn})
}
