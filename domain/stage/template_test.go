package stage_test

import (
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
)

func data() stage.Data {
	return stage.Data{
		TenantID: "acme",
		PlanID:   "P1",
		TaskID:   "T1",
		Attempt:  2,
		Params: map[string]any{
			"region": "eu-west-1",
			"tags":   map[string]any{"env": "prod"},
			"hosts":  []any{"a", "b"},
			"port":   8080,
		},
		Outputs: map[string]any{"build": map[string]any{"image": "app:1.2"}},
	}
}

func TestRenderer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		params map[string]any
		want   map[string]any
	}{
		{"nil params", nil, nil},
		{"plain text is untouched", map[string]any{"a": "no template"}, map[string]any{"a": "no template"}},
		{"non-string values are untouched", map[string]any{"n": 3, "b": true, "f": 1.5, "nil": nil},
			map[string]any{"n": 3, "b": true, "f": 1.5, "nil": nil}},
		{"top-level fields", map[string]any{"url": "https://{{.TenantID}}.example/{{.PlanID}}/{{.TaskID}}/{{.Attempt}}"},
			map[string]any{"url": "https://acme.example/P1/T1/2"}},
		{"tenant params", map[string]any{"r": "{{.Params.region}}", "env": "{{.Params.tags.env}}"},
			map[string]any{"r": "eu-west-1", "env": "prod"}},
		{"nested maps and slices", map[string]any{
			"body": map[string]any{
				"list":  []any{"{{.TenantID}}", map[string]any{"deep": "{{.Params.region}}"}, 7},
				"inner": map[string]any{"x": "{{.Attempt}}"},
			},
		}, map[string]any{
			"body": map[string]any{
				"list":  []any{"acme", map[string]any{"deep": "eu-west-1"}, 7},
				"inner": map[string]any{"x": "2"},
			},
		}},
		{"json func", map[string]any{"h": "{{json .Params.hosts}}", "t": "{{json .Params.tags}}", "s": "{{json .TenantID}}"},
			map[string]any{"h": `["a","b"]`, "t": `{"env":"prod"}`, "s": `"acme"`}},
		{"earlier output", map[string]any{"img": `{{index .Outputs "build" "image"}}`, "dot": "{{.Outputs.build.image}}"},
			map[string]any{"img": "app:1.2", "dot": "app:1.2"}},
	}
	r := stage.NewRenderer()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := r.Render("stages[0].params", tt.params, data())
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestRendererDoesNotModifyInput(t *testing.T) {
	t.Parallel()
	params := map[string]any{"a": "{{.TenantID}}", "m": map[string]any{"b": "{{.TenantID}}"}, "l": []any{"{{.TenantID}}"}}
	_, err := stage.NewRenderer().Render("p", params, data())
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"a": "{{.TenantID}}", "m": map[string]any{"b": "{{.TenantID}}"}, "l": []any{"{{.TenantID}}"}}, params)
}

func TestRendererErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		params    map[string]any
		wantField string
	}{
		{"missing param via dot syntax", map[string]any{"url": "{{.Params.url}}"}, "stages[0].params.url"},
		{"missing nested param", map[string]any{"body": map[string]any{"x": "{{.Params.tags.team}}"}}, "stages[0].params.body.x"},
		{"missing param inside a list", map[string]any{"l": []any{"ok", "{{.Params.nope}}"}}, "stages[0].params.l[1]"},
		{"parse error", map[string]any{"bad": "{{.TenantID"}, "stages[0].params.bad"},
		{"unknown function", map[string]any{"f": "{{nope .TenantID}}"}, "stages[0].params.f"},
		{"unknown field of Data", map[string]any{"f": "{{.Tenant}}"}, "stages[0].params.f"},
		{"first bad field in key order", map[string]any{"b": "{{.Params.x}}", "a": "{{.Params.y}}"}, "stages[0].params.a"},
		{"missing output via dot syntax", map[string]any{"o": "{{.Outputs.deploy.url}}"}, "stages[0].params.o"},
	}
	r := stage.NewRenderer()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := r.Render("stages[0].params", tt.params, data())
			require.ErrorIs(t, err, stage.ErrTemplate)
			assert.Nil(t, got)
			var fe *stage.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.wantField, fe.Field)
			assert.NotEmpty(t, fe.Reason)
		})
	}
}

func TestPlaceholderOutputs(t *testing.T) {
	t.Parallel()
	stages := []stage.Spec{
		{Name: "build", Kind: "k"},
		{Name: "deploy", Kind: "k", Params: map[string]any{"img": `{{index .Outputs "build" "image"}}`}},
		{Name: "verify", Kind: "k"},
	}
	assert.Equal(t, map[string]any{}, stage.PlaceholderOutputs(stages, 0))
	assert.ElementsMatch(t, []string{"build", "deploy"}, slices.Collect(maps.Keys(stage.PlaceholderOutputs(stages, 2))))

	tests := []struct {
		name    string
		index   int // the stage whose params are checked
		param   string
		wantErr bool
	}{
		{"earlier stage renders", 1, `{{index .Outputs "build" "image"}}`, false},
		{"two stages back renders", 2, `{{index .Outputs "build" "image"}}`, false},
		{"json of an earlier output", 2, `{{json (index .Outputs "deploy")}}`, false},
		{"the stage itself fails", 1, `{{index .Outputs "deploy" "url"}}`, true},
		{"a later stage fails", 1, `{{index .Outputs "verify" "ok"}}`, true},
		{"an unknown stage fails", 2, `{{index .Outputs "nope" "x"}}`, true},
		{"first stage sees no outputs", 0, `{{index .Outputs "build" "image"}}`, true},
	}
	r := stage.NewRenderer()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := data()
			d.Outputs = stage.PlaceholderOutputs(stages, tt.index)
			_, err := r.Render("stages[1].params", map[string]any{"p": tt.param}, d)
			if tt.wantErr {
				require.ErrorIs(t, err, stage.ErrTemplate)
				var fe *stage.FieldError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, "stages[1].params.p", fe.Field)
				return
			}
			require.NoError(t, err)
		})
	}
}

func TestRendererConcurrentUse(t *testing.T) {
	t.Parallel()
	r := stage.NewRenderer()
	params := map[string]any{"u": "{{.TenantID}}-{{.Attempt}}"}
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := data()
			d.Attempt = i
			got, err := r.Render("p", params, d)
			if assert.NoError(t, err) {
				assert.Equal(t, "acme-"+strconv.Itoa(i), got["u"])
			}
		}()
	}
	wg.Wait()
}

// Templated says whether any param is a template; UsesOutputs whether one reads .Outputs.
func TestSpecTemplatedAndUsesOutputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                   string
		params                 map[string]any
		templated, usesOutputs bool
	}{
		{"no params", nil, false, false},
		{"no templates", map[string]any{"a": "x", "n": 1, "d": "1s"}, false, false},
		{"templates without outputs", map[string]any{"a": "{{.TenantID}}"}, true, false},
		{"the whole data", map[string]any{"a": "{{json .}}"}, true, false},
		{"the word Outputs outside a template", map[string]any{"a": ".Outputs"}, false, false},
		{"index .Outputs", map[string]any{"a": `{{index .Outputs "b" "c"}}`}, true, true},
		{"dot syntax", map[string]any{"a": "{{.Outputs.b.c}}"}, true, true},
		{"nested in a map", map[string]any{"m": map[string]any{"x": "{{.Outputs.b}}"}}, true, true},
		{"nested in a list", map[string]any{"l": []any{1, "{{.Outputs.b}}"}}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := stage.Spec{Name: "a", Kind: "k", Params: tt.params}
			assert.Equal(t, tt.templated, spec.Templated(), "Templated")
			assert.Equal(t, tt.usesOutputs, spec.UsesOutputs(), "UsesOutputs")
		})
	}
}
