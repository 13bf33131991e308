package cli

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/executor-dev/executor/bench"
)

// TestBenchTableNotApplicable checks which rows print n/a, and why, for each kind of run,
// and that only the top commands are listed.
func TestBenchTableNotApplicable(t *testing.T) {
	t.Parallel()
	var cmds []bench.CommandStat
	for i := range benchTopCommands + 3 {
		cmds = append(cmds, bench.CommandStat{Name: fmt.Sprintf("cmd%02d", i), CallsPerTransition: float64(20 - i), UsecPerCall: 1.5})
	}
	for _, tc := range []struct {
		name          string
		res           bench.Result
		redis, trips  string
		commandsShown int
	}{
		{"in-process on memory", bench.Result{Store: "memory", Through: bench.ThroughUseCases}, "n/a (memory)", "n/a (memory)", 0},
		{"in-process on Redis", bench.Result{Store: "redis", Through: bench.ThroughUseCases, RedisMetrics: true, RoundTripsCounted: true,
			RedisCPUUsPerTransition: 7.25, RoundTripsPerTransition: 0.5, RedisCommands: cmds}, "7.2µs", "0.50", benchTopCommands},
		{"API on memory", bench.Result{Store: "memory", Through: bench.ThroughAPI}, "n/a (memory)", "n/a (memory)", 0},
		{"API on Redis without --redis", bench.Result{Store: "redis", Through: bench.ThroughAPI}, "n/a (no --redis)", "n/a (HTTP API)", 0},
		{"API on Redis with --redis", bench.Result{Store: "redis", Through: bench.ThroughAPI, RedisMetrics: true,
			RedisCPUUsPerTransition: 7.25, RedisCommands: cmds[:2]}, "7.2µs", "n/a (HTTP API)", 2},
	} {
		var b bytes.Buffer
		benchTable(tc.res)(&b)
		out := b.String()
		assert.Contains(t, out, "Redis CPU/transition\t"+tc.redis+"\t", tc.name)
		assert.Contains(t, out, "Redis round trips/transition\t"+tc.trips+"\t", tc.name)
		for i, c := range cmds {
			line := fmt.Sprintf("  %s\t%.2f/transition, 1.5µs/call\t-\n", c.Name, c.CallsPerTransition)
			if i < tc.commandsShown {
				assert.Contains(t, out, line, tc.name)
			} else {
				assert.NotContains(t, out, "  "+c.Name+"\t", tc.name)
			}
		}
	}
}
