package cli

import (
	"bytes"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/wire"
)

func TestExecutorsTable(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	l := wire.ExecutorList{Executors: []wire.Executor{
		{Name: "exec-a", Address: "10.0.0.1:8080", StartedAt: now.Add(-time.Hour), LastHeartbeat: now.Add(-1500 * time.Millisecond), Runs: 3, Alive: true, Self: true},
		{Name: "exec-b", Address: "10.0.0.2:8080", StartedAt: now.Add(-2 * time.Hour), LastHeartbeat: now.Add(-10 * time.Minute), Alive: false},
		{Name: "exec-c", Address: "10.0.0.3:8080", StartedAt: now.Add(-time.Minute), LastHeartbeat: now.Add(time.Second), Runs: 1, Alive: true},
	}}
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	executorsTable(now)(l)(tw)
	require.NoError(t, tw.Flush())
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	require.Len(t, lines, 4)
	tests := []struct {
		name string
		line string
		want []string
	}{
		{"alive, self", lines[1], []string{"exec-a", "10.0.0.1:8080", "yes", "*", "3", "2025-03-01T11:00:00Z", "2s ago"}},
		{"dead", lines[2], []string{"exec-b", "no", "-", "0", "10m0s ago"}},
		{"clock ahead", lines[3], []string{"exec-c", "yes", "0s ago"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, w := range tc.want {
				assert.Contains(t, tc.line, w)
			}
		})
	}
}
