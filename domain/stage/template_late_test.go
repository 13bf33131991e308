package stage_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
)

type pollKind struct{ stage.Handler }

func (pollKind) URLParams() []string  { return []string{"url"} }
func (pollKind) LateParams() []string { return []string{"poll.url"} }

func TestOptionsOfLateParams(t *testing.T) {
	t.Parallel()
	r := stage.NewRenderer()
	params := map[string]any{
		"url":  "https://api.example/{{.TenantID}}/deploy",
		"poll": map[string]any{"url": "https://api.example/deploys/{{.Response.body.id}}", "until": "body.state == 'ready'"},
	}
	out, err := r.Render("stages[0].params", params, stage.Data{TenantID: "a b"}, stage.OptionsOf(pollKind{})...)
	require.NoError(t, err)
	assert.Equal(t, "https://api.example/a%20b/deploy", out["url"], "a URL param is escaped")
	assert.Equal(t, params["poll"].(map[string]any)["url"], out["poll"].(map[string]any)["url"], "a late param is left for the attempt")

	late, err := r.RenderLate("stages[0].params.poll.url", out["poll"].(map[string]any)["url"].(string), stage.Data{
		TenantID: "a b", Response: map[string]any{"status": 202, "body": map[string]any{"id": "d/7"}},
	})
	require.NoError(t, err)
	assert.Equal(t, "https://api.example/deploys/d%2F7", late, "rendered late with the response, escaped as a URL")

	_, err = r.RenderLate("stages[0].params.poll.url", "https://api.example/{{.Response.body.nope}}", stage.Data{
		Response: map[string]any{"body": map[string]any{"id": "d"}},
	})
	var fe *stage.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "stages[0].params.poll.url", fe.Field)
}

func TestLateParamsChecked(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		params map[string]any
		field  string // the bad field, "" when none
	}{
		{"late param that does not parse", map[string]any{"poll": map[string]any{"url": "https://h/{{.Response"}}, "stages[0].params.poll.url"},
		{"response read where it is not late", map[string]any{"url": "https://h/{{.Response.body.id}}"}, "stages[0].params.url"},
		{"late param without template", map[string]any{"poll": map[string]any{"url": "https://h/status"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, errs := stage.NewRenderer().RenderAll("stages[0].params", tt.params, stage.Data{}, stage.OptionsOf(pollKind{})...)
			if tt.field == "" {
				require.Empty(t, errs)
				return
			}
			require.Len(t, errs, 1)
			assert.Equal(t, tt.field, errs[0].Field)
			require.ErrorIs(t, errs[0], stage.ErrTemplate)
		})
	}
}

func TestOptionsOfPlainHandler(t *testing.T) {
	t.Parallel()
	assert.Empty(t, stage.OptionsOf(stage.HandlerFunc(nil)))
}
