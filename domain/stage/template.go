package stage

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/template"
)

// ErrTemplate is returned (wrapped in a *FieldError) when a param template does not parse or
// does not render.
var ErrTemplate = errors.New("template error")

// ErrNoValue is returned (wrapped in a *FieldError) when a template reads a value that is not
// there with index (a stage that does not run earlier, an output key or a param key that does
// not exist, an index into a null value or out of range) or when an action yields nothing
// (what text/template would print as "<no value>"). It matches ErrTemplate too. A missing key
// read with dot syntax (".Params.version") is an ErrTemplate naming the key. Either way the
// stage does not run: nothing is sent with a hole in it.
var ErrNoValue = fmt.Errorf("%w: no value", ErrTemplate)

// ErrSecret is returned (wrapped in a *FieldError) when a template reads a secret
// ({{secret "name"}}) that cannot be resolved: no such secret, or no secrets at all.
var ErrSecret = fmt.Errorf("%w: secret", ErrTemplate)

// Data is what a param template sees.
type Data struct {
	TenantID string
	PlanID   string
	TaskID   string
	Attempt  int
	Params   map[string]any
	Outputs  map[string]any // earlier stages' outputs by stage name
	// ExecutorURL is the base URL of the HTTP API of the executor rendering the template
	// ("http://127.0.0.1:8080"; a listener on every interface reads as loopback), so a plan
	// can call the executor it runs on whatever its address (the examples do); empty when the
	// executor serves no HTTP.
	ExecutorURL string
	// Secret resolves {{secret "name"}}: the secret's value when a stage runs, a placeholder
	// when a submission is checked (the value is never stored nor shown). Nil: a template
	// that reads a secret fails with ErrSecret.
	Secret func(name string) (string, error)
	// Response is what a late param (LateParamer) reads as .Response: the response of the
	// stage's first request ({"status", "headers", "body"} for the http kind). Nil outside a
	// late render.
	Response any
}

// execData is Data as templates execute on it: the same field names, with the outputs typed so
// that the strict index can name the stage a missing key belongs to.
type execData struct {
	TenantID    string
	PlanID      string
	TaskID      string
	Attempt     int
	Params      map[string]any
	Outputs     outputs
	ExecutorURL string
	Response    any
	secret      func(name string) (string, error)
	steps       int       // the {{range}} iterations run so far (rangeGuard)
	made        int       // the bytes the template functions made so far (madeGuard)
	r           *Renderer // rendering it, for its budget
}

// Renderer renders params. It caches parsed templates, so it is cheap to render the same
// template for many tenants. The zero value is not usable; use NewRenderer.
type Renderer struct {
	cache    sync.Map // template text -> *template.Template
	urlCache sync.Map // template text of a URL param -> *template.Template (escaping)
	// Budget of everything the renderer renders, 0 for none (NewBudgetedRenderer).
	maxSteps, maxBytes int64
	steps, bytes, made atomic.Int64
}

// NewRenderer returns an empty Renderer.
func NewRenderer() *Renderer { return &Renderer{} }

// Spent reports whether the renderer's budget is spent (past it, every render fails).
func (r *Renderer) Spent() bool {
	return r.maxSteps > 0 && r.steps.Load() > r.maxSteps || r.maxBytes > 0 && r.bytes.Load() > r.maxBytes
}

// NewBudgetedRenderer returns an empty Renderer whose renders, all together, may run at most
// maxSteps {{range}} iterations and write at most maxBytes (past either, a template fails
// with ErrTemplate): a submission's renderer, which renders every tenant's params.
func NewBudgetedRenderer(maxSteps, maxBytes int64) *Renderer {
	return &Renderer{maxSteps: maxSteps, maxBytes: maxBytes}
}

// Render returns a copy of params whose string values, at any depth, are rendered with data.
// field is the path of params, for example "stages[0].params"; opts are what the stage's
// handler declares (OptionsOf).
//
// It fails with a *FieldError naming the first bad field (in key order) when a template does
// not parse or does not render (ErrTemplate: a missing key read with dot syntax among others),
// or when it reads a value that is not there (ErrNoValue, see there).
//
// URL params (URLs, see URLParamer): what their templates insert is escaped for where it
// lands. In the path, url.PathEscape; in the query or the fragment, url.QueryEscape; before
// the path begins (an action at the very start, as in "{{.Params.endpoint}}/deploy", or in
// the authority) it is inserted as is: that is the base. After an {{if}} or a {{range}} whose
// branches end in different parts of the URL, the furthest part counts. A URL param may not
// call {{template}}.
//
// Late params (Late, see LateParamer) are only parsed: the handler renders them during the
// attempt (RenderLate), when what they read (.Response) is known.
func (r *Renderer) Render(field string, params map[string]any, data Data, opts ...Option) (map[string]any, error) {
	out, errs := r.RenderAll(field, params, data, opts...)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return out, nil
}

// RenderAll is Render reporting every bad field (in key order), not only the first: the
// rendered params are only meaningful when there is none.
func (r *Renderer) RenderAll(field string, params map[string]any, data Data, opts ...Option) (map[string]any, []*FieldError) {
	if params == nil {
		return nil, nil
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	d := newExecData(data)
	d.r = r
	var errs []*FieldError
	out := make(map[string]any, len(params))
	for _, k := range slices.Sorted(maps.Keys(params)) { // deterministic: the first bad field is always the same one
		out[k] = r.render(field+"."+k, k, params[k], &d, &o, &errs)
	}
	return out, errs
}

// RenderLate renders text, the late param at field (see LateParamer), with data, data.Response
// included, as a URL param is rendered.
func (r *Renderer) RenderLate(field, text string, data Data) (string, error) {
	d := newExecData(data)
	d.r = r
	s, err := r.renderString(field, text, &d, true)
	if err != nil {
		return "", err
	}
	return s, nil
}

// newExecData is data as templates execute on it.
func newExecData(data Data) execData {
	return execData{
		TenantID: data.TenantID, PlanID: data.PlanID, TaskID: data.TaskID, Attempt: data.Attempt,
		Params: data.Params, Outputs: outputs(data.Outputs), ExecutorURL: data.ExecutorURL,
		Response: data.Response, secret: data.Secret,
	}
}

// render renders v, at path in params (dotted: "poll.url"), appending what fails to errs.
func (r *Renderer) render(field, path string, v any, data *execData, o *options, errs *[]*FieldError) any {
	switch v := v.(type) {
	case string:
		if slices.Contains(o.late, path) { // rendered by the handler: only checked that it parses
			if _, err := r.parse(v, true); err != nil && strings.Contains(v, "{{") {
				*errs = append(*errs, &FieldError{Field: field, Reason: err.Error(), Err: ErrTemplate})
			}
			return v
		}
		s, err := r.renderString(field, v, data, slices.Contains(o.urls, path))
		if err != nil {
			*errs = append(*errs, err)
		}
		return s
	case map[string]any:
		if v == nil {
			return map[string]any(nil)
		}
		out := make(map[string]any, len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			out[k] = r.render(field+"."+k, path+"."+k, v[k], data, o, errs)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = r.render(fmt.Sprintf("%s[%d]", field, i), fmt.Sprintf("%s[%d]", path, i), e, data, o, errs)
		}
		return out
	default:
		return v
	}
}

func (r *Renderer) renderString(field, text string, data *execData, isURL bool) (string, *FieldError) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	t, err := r.parse(text, isURL)
	if err != nil {
		return "", &FieldError{Field: field, Reason: err.Error(), Err: ErrTemplate}
	}
	if strings.Contains(text, fnSecret) {
		t = withSecrets(t, data.secret) // a copy: the cached template keeps resolving nothing
	}
	var buf cappedWriter
	if err := t.Execute(&buf, data); err != nil {
		var be *budgetError
		if errors.As(err, &be) {
			return "", &FieldError{Field: field, Reason: be.Error(), Err: ErrTemplate}
		}
		var nv *noValueError
		if errors.As(err, &nv) {
			return "", &FieldError{Field: field, Reason: nv.Error(), Err: ErrNoValue}
		}
		var se *secretError
		if errors.As(err, &se) {
			return "", &FieldError{Field: field, Reason: se.Error(), Err: ErrSecret}
		}
		return "", &FieldError{Field: field, Reason: err.Error(), Err: ErrTemplate}
	}
	if r.maxBytes > 0 && r.bytes.Add(int64(len(buf.b))) > r.maxBytes {
		return "", &FieldError{Field: field, Reason: fmt.Sprintf("the params rendered for every tenant write more than %d bytes in all", r.maxBytes), Err: ErrTemplate}
	}
	return string(buf.b), nil
}

func (r *Renderer) parse(text string, isURL bool) (*template.Template, error) {
	cache := &r.cache
	if isURL {
		cache = &r.urlCache
	}
	if t, ok := cache.Load(text); ok {
		return t.(*template.Template), nil
	}
	t, err := template.New("param").Funcs(funcs).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, err
	}
	if len(t.Templates()) > 1 {
		return nil, errTemplateCall
	}
	strict(t.Tree)
	if t.Tree != nil {
		if err := guardMakers(t.Tree.Root); err != nil {
			return nil, err
		}
		guardRanges(t.Tree.Root)
	}
	if isURL {
		escapeURL(t.Tree)
	}
	cache.Store(text, t)
	return t, nil
}
