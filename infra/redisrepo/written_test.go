package redisrepo

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWrittenFieldsSendOnlyChanges(t *testing.T) {
	t.Parallel()
	all := []any{"status", "RUNNING", "stage", 3, "updatedAt", "t2"}
	tests := []struct {
		name    string
		setup   func(w *writtenFields)
		fence   uint64
		version uint64
		want    []any
	}{
		{"nothing known: every field", func(*writtenFields) {}, 2, 5, all},
		{"seeded at the epoch: the changed ones", func(w *writtenFields) {
			w.seed("t", 2, 5, map[string]string{"status": "RUNNING", "stage": "2", "updatedAt": "t1", "fence": "2"})
		}, 2, 5, []any{"stage", 3, "updatedAt", "t2"}},
		{"seeded at another epoch: every field", func(w *writtenFields) {
			w.seed("t", 1, 5, map[string]string{"status": "RUNNING", "stage": "3", "updatedAt": "t2"})
		}, 2, 5, all},
		{"a field never seen is sent", func(w *writtenFields) {
			w.seed("t", 2, 5, map[string]string{"status": "RUNNING", "updatedAt": "t2"})
		}, 2, 5, []any{"stage", 3}},
		{"recorded writes count", func(w *writtenFields) {
			w.seed("t", 2, 5, map[string]string{})
			w.record("t", 2, 6, all)
		}, 2, 6, []any{}},
		{"forgotten: every field", func(w *writtenFields) {
			w.seed("t", 2, 5, map[string]string{"status": "RUNNING", "stage": "3", "updatedAt": "t2"})
			w.forget("t")
		}, 2, 5, all},
		{"cleared by an outage: every field", func(w *writtenFields) {
			w.seed("t", 2, 5, map[string]string{"status": "RUNNING", "stage": "3", "updatedAt": "t2"})
			w.clear()
		}, 2, 5, all},
		{"seeded at another version (another writer's change since): every field", func(w *writtenFields) {
			w.seed("t", 2, 4, map[string]string{"status": "RUNNING", "stage": "3", "updatedAt": "t2"})
		}, 2, 5, all},
		{"a recorded write that does not follow the known version forgets", func(w *writtenFields) {
			w.seed("t", 2, 4, map[string]string{"status": "RUNNING", "stage": "3", "updatedAt": "t2"})
			w.record("t", 2, 6, []any{"status", "RUNNING"})
		}, 2, 6, all},
		{"a value set back to what was written before is sent", func(w *writtenFields) {
			w.seed("t", 2, 5, map[string]string{"status": "RUNNING", "stage": "3", "updatedAt": "t2"})
			w.record("t", 2, 6, []any{"status", "PAUSED"})
		}, 2, 6, []any{"status", "RUNNING"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var w writtenFields
			tc.setup(&w)
			assert.Equal(t, tc.want, w.diff("t", tc.fence, tc.version, all))
		})
	}
}

func TestWrittenFieldsRecordWithoutSeedRemembersNothing(t *testing.T) {
	t.Parallel()
	var w writtenFields
	w.record("t", 1, 1, []any{"status", "RUNNING"})
	require.Empty(t, w.tasks, "a partial write without a seed cannot stand for the whole hash")
}

func TestPlanTouchesAreDueOncePerInterval(t *testing.T) {
	t.Parallel()
	var p planTouches
	ttl := time.Hour // interval ttl/planTouchEvery = 3.6 s
	require.True(t, p.due("p1", ttl), "first end of a task of the plan")
	require.False(t, p.due("p1", ttl), "again within the interval")
	require.True(t, p.due("p2", ttl), "another plan is due on its own")
	require.True(t, p.due("p1", 0), "a zero interval is always due")
}
