package docs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/stagekind"
)

// docs/openapi.yaml's attempt outcome enums (the task's ledger, an event's last attempt) and
// docs/api.md's attempt ledger list every outcome the code has, and nothing else.
func TestAttemptOutcomesDocumented(t *testing.T) {
	t.Parallel()
	want := make([]string, 0, len(task.Outcomes))
	for _, o := range task.Outcomes {
		want = append(want, string(o))
	}

	b, err := os.ReadFile(filepath.Join(root, "docs", "openapi.yaml"))
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, yaml.Unmarshal(b, &doc))
	enums := outcomeEnums(doc)
	require.Len(t, enums, 2, "docs/openapi.yaml: the ledger's and the event's outcome")
	for _, e := range enums {
		assert.ElementsMatch(t, want, e, "docs/openapi.yaml, outcome")
	}

	api, err := os.ReadFile(filepath.Join(root, "docs", "api.md"))
	require.NoError(t, err)
	_, ledger, ok := strings.Cut(string(api), "### The attempt ledger")
	require.True(t, ok, "docs/api.md has no attempt ledger section")
	ledger, _, _ = strings.Cut(ledger, "\n### ")
	for _, o := range want {
		assert.Contains(t, ledger, "- `"+o+"`:", "docs/api.md, the attempt ledger, outcome %s", o)
	}
}

// outcomeEnums returns the enum of every property named outcome in doc, at any depth.
func outcomeEnums(node any) [][]string {
	var out [][]string
	switch n := node.(type) {
	case map[string]any:
		for k, v := range n {
			if m, ok := v.(map[string]any); ok && k == "outcome" {
				if enum, ok := m["enum"].([]any); ok {
					var values []string
					for _, e := range enum {
						values = append(values, e.(string))
					}
					out = append(out, values)
					continue
				}
			}
			out = append(out, outcomeEnums(v)...)
		}
	case []any:
		for _, v := range n {
			out = append(out, outcomeEnums(v)...)
		}
	}
	return out
}

// The http kind's fence header, and its form, are the ones docs/api.md, docs/openapi.yaml, the
// runbook and the design name.
func TestFenceHeaderDocumented(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string
	}{
		{name: "api", file: "api.md"},
		{name: "openapi", file: "openapi.yaml"},
		{name: "runbook", file: "runbook.md"},
		{name: "design", file: "design.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(filepath.Join(root, "docs", tt.file))
			require.NoError(t, err)
			for _, want := range []string{stagekind.FenceHeader, "<tenantId>:<epoch>"} {
				assert.True(t, strings.Contains(string(b), want), "docs/%s does not name %s", tt.file, want)
			}
		})
	}
}
