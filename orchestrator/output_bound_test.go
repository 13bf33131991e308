package orchestrator_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/orchestrator"
)

// Stage outputs live in the checkpoint as long as the task: one stage's output, and a task's
// outputs together, are bounded; past either the stage fails permanently, naming the flag,
// and nothing of the output is kept.
func TestStageOutputsAreBounded(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, orchestrator.Config{MaxOutputBytes: 100, MaxTaskOutputBytes: 150})
	h.register(t, "emit", func(_ context.Context, req stage.Request) (json.RawMessage, error) {
		n, _ := req.Params["n"].(int)
		return json.Marshal(map[string]string{"v": strings.Repeat("x", n)})
	})
	emit := func(name string, n int) stage.Spec {
		return stage.Spec{Name: name, Kind: "emit", Params: map[string]any{"n": n}, Retry: stage.Policy{MaxAttempts: 3}}
	}
	tests := []struct {
		name   string
		stages []stage.Spec
		failed string // the stage that fails, "" when none
	}{
		{"within both", []stage.Spec{emit("a", 60), emit("b", 60)}, ""},
		{"one stage too large", []stage.Spec{emit("a", 120)}, "a"},
		{"the task's outputs too large together", []stage.Spec{emit("a", 80), emit("b", 80)}, "b"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tenant := []app.TenantInput{{ID: "ob-" + string(rune('a'+i))}}
			p := h.submit(t, app.SubmitRequest{Tenants: tenant, Stages: tt.stages})
			v := h.wait(t, p.ID())
			tk := h.tenantTask(t, tenant[0].ID)
			if tt.failed == "" {
				assert.Equal(t, plan.Completed, v.Plan.Status())
				return
			}
			require.Equal(t, task.Failed, tk.Status())
			f := tk.LastError()
			require.NotNil(t, f)
			assert.Equal(t, tt.failed, f.Stage)
			assert.Equal(t, stage.ClassPermanent, f.Class)
			assert.Contains(t, f.Message, "--max-output-bytes")
			assert.Len(t, tk.Ledger(), len(tt.stages), "not retried: a larger output will not get smaller")
		})
	}
}
