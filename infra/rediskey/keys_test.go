package rediskey_test

import (
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
		{"checkpoint", k.Checkpoint("T1"), "executor:ckpt:{T1}"},
		{"tenant index", k.TenantIndex("acme"), "executor:index:tenant:{acme}"},
		{"tenant lock", k.TenantLock("acme"), "executor:lock:tenant:{acme}"},
		{"tenant lock released", k.TenantLockReleased("acme"), "executor:lock:released:{acme}"},
		{"tenant lock released, custom prefix", rediskey.New("x:").TenantLockReleased("acme"), "x:lock:released:{acme}"},
		{"plans", k.Plans(), "executor:plans"},
		{"events", k.Events(), "executor:events"},
		{"signals", k.Signals(), "executor:signals"},
		{"schedule", k.Schedule(), "executor:schedule"},
		{"schedule wake", k.ScheduleWake(), "executor:schedule:wake"},
		{"schedule, custom prefix", rediskey.New("x:").Schedule(), "x:schedule"},
		{"schedule wake, custom prefix", rediskey.New("x:").ScheduleWake(), "x:schedule:wake"},
		{"events, custom prefix", rediskey.New("x:").Events(), "x:events"},
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
