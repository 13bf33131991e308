package rediskey_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/executor-dev/executor/infra/rediskey"
)

func TestKeysFollowTheSchema(t *testing.T) {
	t.Parallel()
	k := rediskey.New("")
	tests := []struct{ name, got, want string }{
		{"plan", k.Plan("P1"), "executor:plan:{P1}"},
		{"task", k.Task("T1"), "executor:task:{T1}"},
		{"plan rows", k.PlanRows("P1"), "executor:planrows:{P1}"},
		{"plan counts", k.PlanCounts("P1"), "executor:plancounts:{P1}"},
		{"plan running", k.PlanRunning("P1"), "executor:planrunning:{P1}"},
		{"checkpoint", k.Checkpoint("T1"), "executor:ckpt:{T1}"},
		{"transcripts", k.Transcripts("T1"), "executor:out:{T1}"},
		{"transcripts, custom prefix", rediskey.New("x:").Transcripts("T1"), "x:out:{T1}"},
		{"tenant index", k.TenantIndex("acme"), "executor:index:tenant:{acme}"},
		{"tenant lock", k.TenantLock("acme"), "executor:lock:tenant:{acme}"},
		{"tenant lock released", k.TenantLockReleased("acme"), "executor:lock:released:{acme}"},
		{"tenant lock released, custom prefix", rediskey.New("x:").TenantLockReleased("acme"), "x:lock:released:{acme}"},
		{"audit", k.Audit("P1"), "executor:audit:{P1}"},
		{"audit outcomes", k.AuditOutcomes("P1"), "executor:auditout:{P1}"},
		{"audit of no plan", k.Audit(""), "executor:audit:{-}"},
		{"audit outcomes of no plan", k.AuditOutcomes(""), "executor:auditout:{-}"},
		{"notify", k.Notify("P1"), "executor:notify:{P1}"},
		{"notifying", k.Notifying(), "executor:notifying"},
		{"plans", k.Plans(), "executor:plans"},
		{"events", k.Events(), "executor:events"},
		{"signals", k.Signals(), "executor:signals"},
		{"schedule", k.Schedule(), "executor:schedule"},
		{"schedule wake", k.ScheduleWake(), "executor:schedule:wake"},
		{"schedule, custom prefix", rediskey.New("x:").Schedule(), "x:schedule"},
		{"schedule wake, custom prefix", rediskey.New("x:").ScheduleWake(), "x:schedule:wake"},
		{"events, custom prefix", rediskey.New("x:").Events(), "x:events"},
		{"dispatch queue", k.DispatchQueue("P1"), "executor:queue:{P1}"},
		{"dispatch in flight", k.DispatchInFlight("P1"), "executor:inflight:{P1}"},
		{"dispatch", k.Dispatch("P1"), "executor:dispatch:{P1}"},
		{"dispatching", k.Dispatching(), "executor:dispatching"},
		{"dispatch wake", k.DispatchWake(), "executor:dispatch:wake"},
		{"dispatch queue, custom prefix", rediskey.New("x:").DispatchQueue("P1"), "x:queue:{P1}"},
		{"dispatching, custom prefix", rediskey.New("x:").Dispatching(), "x:dispatching"},
		{"executors", k.Executors(), "executor:executors"},
		{"executor", k.Executor("web-1"), "executor:executor:{web-1}"},
		{"executors, custom prefix", rediskey.New("x:").Executors(), "x:executors"},
		{"executor, custom prefix", rediskey.New("x:").Executor("web-1"), "x:executor:{web-1}"},
		{"custom prefix", rediskey.New("x:").Task("T1"), "x:task:{T1}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, tc.got)
		})
	}
	idem := k.Idempotency("release {42}:*")
	assert.Regexp(t, `^executor:idem:\{[0-9a-f]{64}\}$`, idem, "client text never reaches the key")
	assert.Equal(t, idem, k.Idempotency("release {42}:*"))
}

// hashTag returns what Redis Cluster hashes for key: the text between its first '{' and the
// next '}' when that is not empty, else the whole key.
func hashTag(key string) string {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return key
	}
	end := strings.IndexByte(key[open+1:], '}')
	if end <= 0 {
		return key
	}
	return key[open+1 : open+1+end]
}

func TestDispatchKeysOfOnePlanShareASlot(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{"", "x:", "contract:{weird}:"} {
		t.Run("prefix "+prefix, func(t *testing.T) {
			t.Parallel()
			k := rediskey.New(prefix)
			if strings.Contains(prefix, "{") {
				// A prefix with its own hash tag puts every key in its slot: still one slot.
				assert.Equal(t, hashTag(k.DispatchQueue("P1")), hashTag(k.Dispatch("P1")))
				return
			}
			for _, key := range []string{k.DispatchQueue("P1"), k.DispatchInFlight("P1"), k.Dispatch("P1")} {
				assert.Equal(t, "P1", hashTag(key), key)
			}
			assert.NotEqual(t, "P1", hashTag(k.Dispatching()), "the active set is not the plan's")
		})
	}
}

// A task's keys (its hash, checkpoint and transcripts) share its slot: one script writes
// the transcripts with the task's TTL.
func TestKeysOfOneTaskShareASlot(t *testing.T) {
	t.Parallel()
	k := rediskey.New("")
	for _, key := range []string{k.Task("T1"), k.Checkpoint("T1"), k.Transcripts("T1")} {
		assert.Equal(t, "T1", hashTag(key), key)
	}
}
