package stage

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/template"
	"text/template/parse"
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

// SecretsIn returns the names of the secrets params read by name ({{secret "name"}}, a string
// literal), each once, in the order met (params' keys sorted): what an executor must resolve
// to run the stage. A template that does not parse, or names its secret otherwise (from a
// param), adds nothing.
func SecretsIn(params map[string]any) []string {
	var names []string
	seen := map[string]bool{}
	var visit func(v any)
	visit = func(v any) {
		switch v := v.(type) {
		case string:
			if !strings.Contains(v, fnSecret) || !strings.Contains(v, "{{") {
				return
			}
			t, err := template.New("param").Funcs(funcs).Parse(v)
			if err != nil {
				return
			}
			walkActions(t.Tree.Root, func(a *parse.ActionNode) {
				secretsInPipe(a.Pipe, func(name string) {
					if !seen[name] {
						seen[name] = true
						names = append(names, name)
					}
				})
			})
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				visit(v[k])
			}
		case []any:
			for _, e := range v {
				visit(e)
			}
		}
	}
	visit(params)
	return names
}

// secretsInPipe calls found with the name of every {{secret "name"}} call in pipe, nested
// pipelines included.
func secretsInPipe(pipe *parse.PipeNode, found func(string)) {
	if pipe == nil {
		return
	}
	for _, cmd := range pipe.Cmds {
		if len(cmd.Args) == 2 {
			if id, ok := cmd.Args[0].(*parse.IdentifierNode); ok && id.Ident == fnSecret {
				if s, ok := cmd.Args[1].(*parse.StringNode); ok {
					found(s.Text)
				}
			}
		}
		for _, arg := range cmd.Args {
			if p, ok := arg.(*parse.PipeNode); ok {
				secretsInPipe(p, found)
			}
		}
	}
}
