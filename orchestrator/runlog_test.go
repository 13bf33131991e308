package orchestrator_test

import (
	"encoding/json"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/orchestrator"
)

// logBuffer collects an orchestrator's JSON log lines.
type logBuffer struct {
	mu    sync.Mutex
	lines [][]byte
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, append([]byte(nil), p...))
	return len(p), nil
}

// find returns the records whose msg is msg.
func (l *logBuffer) find(t *testing.T, msg string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range l.lines {
		var rec map[string]any
		require.NoError(t, json.Unmarshal(line, &rec), "%s", line)
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// A run logs "task started" (Info) naming its plan, task, tenant and run, and "stage completed"
// (Debug) for each stage, as docs/runbook.md lists them.
func TestARunLogsItsStartAndItsStages(t *testing.T) {
	t.Parallel()
	logs := &logBuffer{}
	h := newHarnessWith(t, orchestrator.Config{Workers: 2,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("lg", 1), Stages: stages("noop", "one", "two")})
	h.wait(t, p.ID())
	tk := h.tenantTask(t, "lg-000")

	started := logs.find(t, "task started")
	require.Len(t, started, 1)
	assert.Equal(t, "INFO", started[0]["level"])
	for field, want := range map[string]any{
		"plan_id": p.ID(), "task_id": tk.ID(), "tenant_id": "lg-000", "run": float64(1), "stage": "one",
	} {
		assert.Equal(t, want, started[0][field], field)
	}

	completed := logs.find(t, "stage completed")
	require.Len(t, completed, 2)
	for i, rec := range completed {
		assert.Equal(t, "DEBUG", rec["level"])
		assert.Equal(t, []string{"one", "two"}[i], rec["stage"])
		assert.Contains(t, rec, "duration_ms")
	}
}
