package stage_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
)

// runData is what a template sees at run time: stage "noop" output null (a checkpoint keeps it
// as an empty object), stage "nil" a null the store kept as such, stage "build" an object.
func runData() stage.Data {
	d := data()
	d.Params["none"] = nil
	d.Outputs = map[string]any{
		"noop":  map[string]any{},
		"nil":   nil,
		"build": map[string]any{"image": "app:1.2", "hosts": []any{"h1"}, "meta": map[string]any{"zone": "a"}},
	}
	return d
}

func TestRendererFailsWhatWouldRenderNoValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		template   string
		wantReason string
	}{
		{"missing output key", `/x/{{index .Outputs "noop" "x"}}`, `stage "noop" has no output key "x"`},
		{"missing nested output key", `{{index .Outputs "build" "meta" "region"}}`, `stage "build" has no output key "meta.region"`},
		{"index into a null output", `{{index .Outputs "nil" "x"}}`, `stage "nil" output is null: no key "x"`},
		{"index out of range", `{{index .Outputs "build" "hosts" 3}}`, `stage "build" output key "hosts" has no index 3 (length 1)`},
		{"a stage that did not run", `{{index .Outputs "later" "x"}}`, `no stage "later" runs before this one`},
		{"a null output printed", `{{index .Outputs "nil"}}`, `{{index .Outputs "nil"}} yields no value`},
		{"a null output printed with dot syntax", `{{.Outputs.nil}}`, `{{.Outputs.nil}} yields no value`},
		{"a null param printed", `v={{.Params.none}}`, `{{.Params.none}} yields no value`},
		{"a missing param key with index", `{{index .Params "tags" "team"}}`, `key "tags" has no key "team"`},
	}
	r := stage.NewRenderer()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, opts := range [][]stage.Option{nil, {stage.URLs("p")}} { // plain and URL params alike
				got, err := r.Render("params", map[string]any{"p": tt.template}, runData(), opts...)
				require.ErrorIs(t, err, stage.ErrNoValue)
				require.ErrorIs(t, err, stage.ErrTemplate, "a no-value error is a template error")
				assert.Nil(t, got)
				var fe *stage.FieldError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, "params.p", fe.Field)
				assert.Equal(t, tt.wantReason, fe.Reason)
				assert.NotContains(t, err.Error(), "<no value>")
			}
		})
	}
}

func TestRendererStrictIndexStillReads(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, template, want string }{
		{"output key", `{{index .Outputs "build" "image"}}`, "app:1.2"},
		{"nested output key", `{{index .Outputs "build" "meta" "zone"}}`, "a"},
		{"list element", `{{index .Outputs "build" "hosts" 0}}`, "h1"},
		{"nested index calls", `{{index (index .Outputs "build") "image"}}`, "app:1.2"},
		{"tenant param", `{{index .Params "region"}}`, "eu-west-1"},
		{"a null output is false in if", `{{if index .Outputs "nil"}}yes{{else}}no{{end}}`, "no"},
		{"a null output skipped by with", `{{with .Outputs.nil}}{{.}}{{else}}none{{end}}`, "none"},
		{"a declaration prints nothing", `{{$o := index .Outputs "nil"}}ok`, "ok"},
		{"an empty output as JSON", `{{json (index .Outputs "noop")}}`, "{}"},
	}
	r := stage.NewRenderer()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := r.Render("params", map[string]any{"p": tt.template}, runData())
			require.NoError(t, err)
			assert.Equal(t, tt.want, got["p"])
		})
	}
}

func TestRendererPlaceholdersPassAnyKeyOfAnEarlierStage(t *testing.T) {
	t.Parallel()
	stages := []stage.Spec{{Name: "build", Kind: "k"}, {Name: "deploy", Kind: "k"}, {Name: "verify", Kind: "k"}}
	tests := []struct{ name, template, want string }{
		{"a key", `{{index .Outputs "build" "image"}}`, "<output build.image>"},
		{"a nested key", `{{index .Outputs "build" "a" "b"}}`, "<output build.a.b>"},
		{"a list element", `{{index .Outputs "build" "hosts" 0}}`, "<output build.hosts.0>"},
		{"compared", `{{if eq (index .Outputs "build" "status") "ok"}}y{{else}}n{{end}}`, "n"},
		{"ranged over", `[{{range index .Outputs "build"}}x{{end}}]`, "[]"},
		{"as JSON", `{{json (index .Outputs "build")}}`, "{}"},
		{"in a URL path", `https://h/{{index .Outputs "build" "image"}}`, "https://h/%3Coutput%20build.image%3E"},
	}
	r := stage.NewRenderer()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := data()
			d.Outputs = stage.PlaceholderOutputs(stages, 2)
			got, err := r.Render("stages[2].params", map[string]any{"url": tt.template}, d, stage.URLs("url"))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got["url"])
		})
	}
	d := data()
	d.Outputs = stage.PlaceholderOutputs(stages, 1)
	_, err := r.Render("stages[1].params", map[string]any{"p": `{{index .Outputs "verify" "ok"}}`}, d)
	require.ErrorIs(t, err, stage.ErrNoValue, "a stage that does not run earlier still fails at check time")
}

func TestRendererEscapesWhatURLTemplatesInsert(t *testing.T) {
	t.Parallel()
	d := data()
	d.Params["v"] = "a b/c?d=e&f#g"
	d.Params["endpoint"] = "https://api.example:8443/v1"
	d.Params["host"] = "svc.example"
	const esc = "a%20b%2Fc%3Fd=e&f%23g"    // url.PathEscape
	const qesc = "a+b%2Fc%3Fd%3De%26f%23g" // url.QueryEscape
	tests := []struct{ name, template, want string }{
		{"path", "https://h/x/{{.Params.v}}/y", "https://h/x/" + esc + "/y"},
		{"query", "https://h/x?from={{.Params.v}}&n=1", "https://h/x?from=" + qesc + "&n=1"},
		{"query without a path", "https://h?from={{.Params.v}}", "https://h?from=" + qesc},
		{"fragment", "https://h/x#{{.Params.v}}", "https://h/x#" + qesc},
		{"base at the start is inserted as is", "{{.Params.endpoint}}/deploy/{{.Params.v}}", "https://api.example:8443/v1/deploy/" + esc},
		{"the whole URL", "{{.Params.endpoint}}", "https://api.example:8443/v1"},
		{"authority is inserted as is", "https://{{.Params.host}}:8443/{{.Params.v}}", "https://svc.example:8443/" + esc},
		{"scheme inserted by an action", "{{.Params.s}}://h/{{.Params.v}}", "https://h/" + esc},
		{"after an if reaching the query", "https://h/p{{if .TenantID}}?q=1&x={{end}}{{.Params.v}}", "https://h/p?q=1&x=" + qesc},
		{"inside a range", "https://h/{{range .Params.hosts}}{{.}}?{{end}}", "https://h/a?b?"},
		{"the path of a tenant id", "https://h/tenants/{{.TenantID}}/{{.Params.port}}", "https://h/tenants/acme/8080"},
	}
	r := stage.NewRenderer()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dd := d
			dd.Params = map[string]any{}
			for k, v := range d.Params {
				dd.Params[k] = v
			}
			dd.Params["s"] = "https"
			got, err := r.Render("params", map[string]any{"url": tt.template, "other": tt.template}, dd, stage.URLs("url"))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got["url"])
			plain, err := r.Render("params", map[string]any{"other": tt.template}, dd)
			require.NoError(t, err)
			assert.Equal(t, plain["other"], got["other"], "a param that is not a URL is not escaped")
		})
	}
	_, err := r.Render("params", map[string]any{"url": `{{define "x"}}{{.}}{{end}}https://h/{{template "x" .Params.v}}`}, d, stage.URLs("url"))
	require.ErrorIs(t, err, stage.ErrTemplate, "what {{template}} inserts cannot be escaped")
}

func TestRenderAllReportsEveryBadField(t *testing.T) {
	t.Parallel()
	params := map[string]any{
		"a":   "{{.Params.nope}}",
		"ok":  "{{.TenantID}}",
		"b":   map[string]any{"c": `{{index .Outputs "noop" "x"}}`},
		"bad": "{{.TenantID",
	}
	got, errs := stage.NewRenderer().RenderAll("params", params, runData())
	fields := make([]string, len(errs))
	for i, e := range errs {
		fields[i] = e.Field
	}
	assert.Equal(t, []string{"params.a", "params.b.c", "params.bad"}, fields)
	assert.Equal(t, "acme", got["ok"])
}
