package main_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/wire"
)

// Every example runs against an executor on any address, not only on the default
// 127.0.0.1:8080: the http stages call {{.ExecutorURL}}, the executor's own API, wherever it
// listens. Each example gets its own executor (the examples share tenant ids).
func TestExamplesRunOnANonDefaultPort(t *testing.T) {
	t.Parallel()
	scripts, err := filepath.Abs(filepath.Join("..", "..", "examples", "exec-rollout"))
	require.NoError(t, err)
	tests := []struct {
		file  string
		want  string // the plan's status once submit answered
		wait  bool
		serve []string // serve's flags
	}{
		{file: "hello.yaml", want: "COMPLETED", wait: true},
		{file: "async-deploy.yaml", want: "COMPLETED", wait: true},
		{file: "exec-rollout/plan.yaml", want: "COMPLETED", wait: true, serve: []string{"--exec-allow", scripts + "/"}},
		{file: "hello.json", want: "COMPLETED", wait: true},
		{file: "canary-approval.yaml", want: "RUNNING"},
		{file: "scheduled.yaml", want: "SCHEDULED"},
		{file: "rings.yaml", want: "RUNNING"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			p := startExecutor(t, strings.TrimSuffix(tt.file, filepath.Ext(tt.file)), "", tt.serve...)
			require.NotContains(t, p.addr, ":8080", "the point is another port")
			args := []string{"submit", "-f", filepath.Join("..", "..", "examples", tt.file), "-o", "json"}
			if tt.wait {
				args = append(args, "--wait")
			}
			r := p.cli(t, args...)
			requireExit(t, 0, r)
			pl := decode[wire.Plan](t, r.stdout)
			assert.Equal(t, tt.want, pl.Status)
			if !tt.wait {
				return
			}
			tasks := decode[wire.TaskList](t, runBinary(t, p.URL(), "plan", "tasks", pl.PlanID, "-o", "json").stdout)
			require.NotEmpty(t, tasks.Tasks)
			for _, tk := range tasks.Tasks {
				assert.Equal(t, "COMPLETED", tk.Status, "tenant %s: %+v", tk.TenantID, tk.LastError)
				for _, a := range tk.Attempts {
					assert.Equal(t, "succeeded", a.Outcome, "tenant %s stage %s: %s", tk.TenantID, a.Stage, a.Error)
				}
			}
		})
	}
}
