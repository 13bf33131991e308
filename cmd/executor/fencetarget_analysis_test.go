package main_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/executor-dev/executor/wire"
)

// The recording target's verdicts, on hand-made histories: what counts as two calls in flight
// at once, as a completed stage run again, and as an unfenced or stale call.
func TestFenceTargetCountsOverlapsRerunsAndStaleFences(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	call := func(id int, tenant, stage string, run int, key, fence string, start, end float64, completed bool) targetCall {
		c := targetCall{ID: id, Tenant: tenant, Stage: stage, Run: run, Key: key, Fence: fence, Start: at(start), Completed: completed}
		if end >= 0 {
			c.End = at(end)
			if completed {
				c.Status = 200
			}
		}
		return c
	}
	history := []targetCall{
		// t1: run 1 completes s1, then its s2 is in flight while run 2 starts s1 again.
		call(0, "t1", "s1", 1, "k1", "t1:1", 0, 3, true),
		call(1, "t1", "s2", 1, "k2", "t1:1", 3, 9, false),
		call(2, "t1", "s1", 2, "k3", "t1:2", 5, 8, true),
		// t2: run 1's s2 is cut by its caller; the retry reuses its key once (in_doubt) and a
		// third call with the same key is one too many.
		call(3, "t2", "s2", 1, "kk", "t2:1", 0, 2, true),
		call(4, "t2", "s2", 2, "kk", "t2:2", 2, 4, true),
		call(5, "t2", "s2", 3, "kk", "t2:3", 4, 6, true),
		// t3: a call hung up before the next starts, exactly at its end: no overlap; a call
		// still in flight overlaps everything after it; a stale and a missing fence.
		call(6, "t3", "s1", 1, "a", "t3:5", 0, 1, false),
		call(7, "t3", "s1", 2, "b", "t3:6", 1, -1, false),
		call(8, "t3", "s2", 1, "c", "t3:5", 2, 3, false),
		call(9, "t3", "s3", 2, "d", "", 4, 5, false),
	}

	over := overlaps(history)
	assert.Len(t, over["t1"], 1, "t1's run 2 s1 overlaps run 1's s2")
	assert.Empty(t, over["t2"], "back-to-back calls do not overlap")
	assert.Len(t, over["t3"], 2, "the call still in flight overlaps the two calls after it")

	again := reruns(history, map[string]int{"t2/s2": 1})
	assert.Len(t, again, 2, "t1/s1 with another key, t2/s2's third call: %v", again)
	assert.Contains(t, again[0], "t1/s1")
	assert.Contains(t, again[1], "t2/s2")
	assert.Contains(t, again[1], "#5")
	assert.Len(t, reruns(history, map[string]int{"t2/s2": 2}), 1, "two in_doubt attempts allow two retries")

	ledger := []wire.Task{
		{TenantID: "t1", Attempts: []wire.Attempt{{Stage: "s2", Run: 1, Outcome: "in_doubt"}}},
		{TenantID: "t2", Attempts: []wire.Attempt{{Stage: "s2", Run: 1, Outcome: "in_doubt"}, {Stage: "s2", Run: 2, Outcome: "succeeded"}}},
	}
	history = append(history, call(10, "t1", "s2", 2, "k2-new", "t1:2", 9, 10, true))
	keys := inDoubtKeyFaults(history, ledger)
	assert.Len(t, keys, 1, "t1/s2 retried with a new key; t2/s2 with the in-doubt one: %v", keys)
	assert.Contains(t, keys[0], "t1/s2 in doubt in run 1")

	fence := fenceFaults(history)
	assert.Len(t, fence, 2, "%v", fence)
	assert.Contains(t, fence[0], "no fencing token")
	assert.Contains(t, fence[1], "stale epoch 5 after 6")
}
