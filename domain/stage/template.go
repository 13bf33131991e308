package stage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"text/template"
)

// ErrTemplate is returned (wrapped in a *FieldError) when a param template does not parse or
// does not render.
var ErrTemplate = errors.New("template error")

// Data is what a param template sees.
type Data struct {
	TenantID string
	PlanID   string
	TaskID   string
	Attempt  int
	Params   map[string]any
	Outputs  map[string]any // earlier stages' outputs by stage name
}

// Renderer renders params. It caches parsed templates, so it is cheap to render the same
// template for many tenants. The zero value is not usable; use NewRenderer.
type Renderer struct {
	cache sync.Map // template text -> *template.Template
}

// NewRenderer returns an empty Renderer.
func NewRenderer() *Renderer { return &Renderer{} }

var funcs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
}

// Render returns a copy of params whose string values, at any depth, are rendered with data.
// A template that does not parse or render, or that reads a missing key with dot syntax, is an
// error naming the field (field is the path of params, for example "stages[0].params").
func (r *Renderer) Render(field string, params map[string]any, data Data) (map[string]any, error) {
	out, err := r.render(field, params, data)
	if err != nil {
		return nil, err
	}
	m, _ := out.(map[string]any)
	return m, nil
}

func (r *Renderer) render(field string, v any, data Data) (any, error) {
	switch v := v.(type) {
	case string:
		return r.renderString(field, v, data)
	case map[string]any:
		if v == nil {
			return map[string]any(nil), nil
		}
		out := make(map[string]any, len(v))
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys) // deterministic: the first bad field is always the same one
		for _, k := range keys {
			rv, err := r.render(field+"."+k, v[k], data)
			if err != nil {
				return nil, err
			}
			out[k] = rv
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			rv, err := r.render(fmt.Sprintf("%s[%d]", field, i), e, data)
			if err != nil {
				return nil, err
			}
			out[i] = rv
		}
		return out, nil
	default:
		return v, nil
	}
}

func (r *Renderer) renderString(field, text string, data Data) (string, error) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	t, err := r.parse(text)
	if err != nil {
		return "", &FieldError{Field: field, Reason: err.Error(), Err: ErrTemplate}
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		return "", &FieldError{Field: field, Reason: err.Error(), Err: ErrTemplate}
	}
	return buf.String(), nil
}

func (r *Renderer) parse(text string) (*template.Template, error) {
	if t, ok := r.cache.Load(text); ok {
		return t.(*template.Template), nil
	}
	t, err := template.New("param").Funcs(funcs).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, err
	}
	r.cache.Store(text, t)
	return t, nil
}

// PlaceholderOutputs stands in for the outputs of stages[:index] when a template is checked
// before anything ran: each earlier stage's output is an empty object, so `index .Outputs
// "earlier" "key"` renders while a reference to a stage that does not run earlier fails.
func PlaceholderOutputs(stages []Spec, index int) map[string]any {
	out := make(map[string]any, index)
	for _, s := range stages[:index] {
		out[s.Name] = map[string]any{}
	}
	return out
}
