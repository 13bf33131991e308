package stage_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
)

// No param's template can exhaust memory or CPU: what it writes and how often its ranges
// iterate are bounded, and a template past a bound fails at once, naming the param.
func TestTemplatesAreBounded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		params map[string]any
		field  string // "" when it renders
	}{
		{"a huge range writing", map[string]any{"x": "{{range 100000000}}x{{end}}"}, "p.x"},
		{"ranges of ranges writing nothing", map[string]any{"x": "{{range 100000}}{{range 100000}}{{end}}{{end}}"}, "p.x"},
		{"ranges spread over params", map[string]any{"a": "{{range 60000}}{{end}}", "b": "{{range 60000}}{{end}}"}, "p.b"},
		{"a large output without range", map[string]any{"x": `{{printf "%300000d" 1}}`}, "p.x"},
		{"a range over a list", map[string]any{"x": "{{range .Params.hosts}}{{.}},{{end}}"}, ""},
		{"a range with variables", map[string]any{"x": "{{range $i, $h := .Params.hosts}}{{$i}}={{$h}};{{end}}"}, ""},
		{"a small range", map[string]any{"x": "{{range 3}}.{{end}}"}, ""},
		{"strings made and dropped in a range", map[string]any{"x": `{{range 100000}}{{$_ := printf "%01000000d" 0}}{{end}}`}, "p.x"},
		{"strings made in parentheses", map[string]any{"x": `{{len (printf "%0600000d" 0)}}{{len (printf "%0600000d" 0)}}`}, "p.x"},
		{"strings made in a condition", map[string]any{"x": `{{range 10}}{{if eq (print (printf "%0200000d" 0)) ""}}{{end}}{{end}}`}, "p.x"},
		{"escapes of a made string", map[string]any{"x": `{{$s := printf "%0200000d" 0}}{{range 10}}{{$_ := html $s}}{{$_ := js $s}}{{end}}`}, "p.x"},
		{"made strings spread over params", map[string]any{"a": `{{len (printf "%0600000d" 0)}}`, "b": `{{len (printf "%0600000d" 0)}}`}, "p.b"},
		{"a template defined and called", map[string]any{"x": `{{define "t"}}{{range 100000}}{{end}}{{end}}{{range 100000}}{{template "t"}}{{end}}`}, "p.x"},
		{"a block", map[string]any{"x": `{{block "b" .}}x{{end}}`}, "p.x"},
		{"small strings made", map[string]any{"x": `{{range .Params.hosts}}{{printf "%s-%d" . 3 | html}}{{json .}}{{end}}`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			out, err := stage.NewRenderer().Render("p", tt.params, stage.Data{Params: map[string]any{"hosts": []any{"a", "b"}}})
			if tt.field == "" {
				require.NoError(t, err)
				assert.NotEmpty(t, out["x"])
				return
			}
			require.ErrorIs(t, err, stage.ErrTemplate)
			var fe *stage.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.field, fe.Field)
			t.Logf("refused in %v: %s", time.Since(start).Round(time.Microsecond), fe.Reason)
		})
	}
}

func TestBoundedTemplateOutputs(t *testing.T) {
	t.Parallel()
	out, err := stage.NewRenderer().Render("p", map[string]any{"x": "{{range .Params.hosts}}{{.}},{{end}}", "y": "{{range $i, $h := .Params.hosts}}{{$i}}={{$h}};{{end}}"},
		stage.Data{Params: map[string]any{"hosts": []any{"a", "b"}}})
	require.NoError(t, err)
	assert.Equal(t, "a,b,", out["x"])
	assert.Equal(t, "0=a;1=b;", out["y"])
}
