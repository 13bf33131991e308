package stage_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
)

func TestSecretsResolveWhenTheTemplateRuns(t *testing.T) {
	t.Parallel()
	r := stage.NewRenderer()
	params := map[string]any{
		"headers": map[string]any{"Authorization": `Bearer {{secret "api-token"}}`},
		"url":     `https://deploy.example/{{.TenantID}}?key={{secret "api-token"}}`,
	}
	resolve := func(name string) (string, error) {
		if name == "api-token" {
			return "s3cr&t", nil
		}
		return "", errors.New("no such secret")
	}
	out, err := r.Render("stages[0].params", params, stage.Data{TenantID: "acme", Secret: resolve}, stage.URLs("url"))
	require.NoError(t, err)
	assert.Equal(t, "Bearer s3cr&t", out["headers"].(map[string]any)["Authorization"])
	assert.Equal(t, "https://deploy.example/acme?key=s3cr%26t", out["url"], "escaped where it lands, like any value")

	// The same cached templates, rendered without secrets: each names its field.
	_, errs := r.RenderAll("stages[0].params", params, stage.Data{TenantID: "acme"}, stage.URLs("url"))
	require.Len(t, errs, 2)
	assert.Equal(t, "stages[0].params.headers.Authorization", errs[0].Field)
	require.ErrorIs(t, errs[0], stage.ErrSecret)

	_, err = r.Render("p", map[string]any{"v": `{{secret "nope"}}`}, stage.Data{Secret: resolve})
	require.ErrorIs(t, err, stage.ErrSecret)
	assert.Contains(t, err.Error(), "no such secret")
}
