package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/executor-dev/executor/wire"
)

func TestCheckpointTableShowsAStageInProgress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		progress *wire.Progress
		want     string // "" when no progress line is shown
	}{
		{"none", nil, ""},
		{"an http poll's first response", &wire.Progress{Stage: "deploy", Data: json.RawMessage(`{"status":202,"body":{"id":"d-7"}}`)}, `IN PROGRESS deploy {"status":202,"body":{"id":"d-7"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			checkpointTable(wire.Checkpoint{TenantID: "t1", TaskID: "01TASK", CompletedStages: []string{"release"}, Progress: tt.progress})(&b)
			got := strings.Join(strings.Fields(b.String()), " ")
			if tt.want == "" {
				assert.NotContains(t, got, "IN PROGRESS")
				return
			}
			assert.Contains(t, got, tt.want)
		})
	}
}
