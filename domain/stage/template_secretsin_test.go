package stage_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/executor-dev/executor/domain/stage"
)

func TestSecretsIn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		params map[string]any
		want   []string
	}{
		{"none", map[string]any{"url": "https://h/{{.TenantID}}"}, nil},
		{"a header", map[string]any{"headers": map[string]any{"Authorization": `Bearer {{secret "api-token"}}`}}, []string{"api-token"}},
		{"nested pipeline, args and env, each once", map[string]any{
			"args": []any{`{{printf "--token=%s" (secret "deploy-key")}}`, `{{secret "deploy-key"}}`},
			"env":  map[string]any{"PASSWORD": `{{secret "db-password"}}`},
		}, []string{"deploy-key", "db-password"}},
		{"named from a param: not known before it renders", map[string]any{"x": `{{secret .Params.name}}`}, nil},
		{"does not parse", map[string]any{"x": `{{secret "a"`}, nil},
		{"the word alone", map[string]any{"body": "secret {{.TenantID}}"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, stage.SecretsIn(tt.params))
		})
	}
}
