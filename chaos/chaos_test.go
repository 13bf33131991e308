//go:build chaos

package chaos

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// binary is the executor built by TestMain.
var binary string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "executor-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos: temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if binary, err = BuildExecutor("..", dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// TestChaos runs the chaos suite for CHAOS_DURATION (default 25s; `make chaos` runs 5m) and
// asserts its invariants: no tenant in flight twice and no stale caller served, no completed
// stage re-run but the operator's retry of an in-doubt attempt with its Idempotency-Key, every
// acknowledged cancel and retry honoured and every acknowledged plan kept, no task stranded,
// the API's view equal to Redis's, no task INTERRUPTED under latency alone; and no executor
// crashed, no API answer 5xx other than 503.
func TestChaos(t *testing.T) {
	cfg, err := ConfigFromEnv()
	require.NoError(t, err)
	rep := Run(t, cfg, binary)
	t.Log("\n" + rep.String())
	if t.Failed() || rep.Results.Violations() > 0 {
		t.Log("timeline:\n" + rep.Timeline())
	}
	r := rep.Results
	assert.Positive(t, rep.Calls, "the workload ran stages")
	assert.Positive(t, len(rep.Faults), "faults were injected")
	assert.LessOrEqual(t, r.MaxInFlight, 1, "1. no tenant in flight twice: %v", r.Overlaps)
	assert.Empty(t, r.StaleCalls, "1. no stale caller served")
	assert.Empty(t, r.FenceMissing, "1. every stage call carries its Executor-Fence")
	assert.Empty(t, r.ReRuns, "2. no completed stage re-run but the retry of an in-doubt attempt, with its key")
	assert.Empty(t, r.LatencyInterrupts, "6. no task INTERRUPTED under latency alone")
	assert.Empty(t, r.CancelViolations, "3. every acknowledged cancel honoured")
	assert.Empty(t, r.RetryViolations, "3. every acknowledged retry honoured")
	assert.Empty(t, r.LostPlans, "3. every acknowledged plan kept")
	assert.Empty(t, r.Stranded, "4. no task stranded")
	assert.Empty(t, r.PlansOpen, "4. every plan ended")
	assert.Empty(t, r.Mismatches, "5. the API's view equals Redis's")
	assert.Empty(t, r.Exits, "no executor exited on its own, panicked or raced")
	assert.Empty(t, r.ServerErrors, "no API answer 5xx other than 503")
}
