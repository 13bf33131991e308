package task_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

func TestAbandonAndBeat(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	specs := []stage.Spec{{Name: "one", Kind: "noop"}}
	lost := task.Failure{Class: stage.ClassLeaseLost, Message: "owner gone"}

	tk, err := task.New("01JD7Y0000000000000000000A", "t1", nil, specs, now)
	require.NoError(t, err)
	require.ErrorIs(t, tk.Beat(now), task.ErrInvalidTransition, "only a RUNNING task beats")
	require.ErrorIs(t, tk.Abandon(5, lost, now), task.ErrInvalidTransition, "only a RUNNING task is abandoned")

	require.NoError(t, tk.Start(3, now))
	assert.Equal(t, now, tk.HeartbeatAt(), "start is a heartbeat")
	later := now.Add(20 * time.Second)
	require.NoError(t, tk.Beat(later))
	assert.Equal(t, later, tk.HeartbeatAt())

	require.ErrorIs(t, tk.Abandon(2, lost, later), task.ErrFenced, "the taker cannot hold an older epoch")
	require.NoError(t, tk.Abandon(4, lost, later))
	assert.Equal(t, task.Interrupted, tk.Status())
	assert.Equal(t, uint64(4), tk.Fence())
	assert.Equal(t, stage.ClassLeaseLost, tk.LastError().Class)
}
