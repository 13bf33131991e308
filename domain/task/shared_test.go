package task_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/executor-dev/executor/domain/task"
)

func TestHeldFollowsThePredicateOfWhileHeldAsItChanges(t *testing.T) {
	t.Parallel()
	var lost atomic.Bool
	ctx := task.WhileHeld(context.Background(), func() bool { return !lost.Load() })
	assert.True(t, task.Held(ctx), "within the deadline")
	lost.Store(true)
	assert.False(t, task.Held(ctx), "past it: asked at each send, not when the context was made")
	assert.True(t, task.Held(context.Background()), "a write not made WhileHeld is always sent")
	assert.True(t, task.MustBeShared(task.MustShare(ctx)), "the marks combine")
	assert.False(t, task.Held(task.MustShare(ctx)))
}
