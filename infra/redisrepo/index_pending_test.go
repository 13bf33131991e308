package redisrepo

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/task"
)

// Rows wait newest first, a row about to be written drops the older one that waits, and a
// stopped store arms no flush any more (no timer outlives it).
func TestPendingRows(t *testing.T) {
	t.Parallel()
	var p pendingRows
	p.add("p1", []task.Row{{ID: "a", Fence: 1, Version: 3, Stage: 2}})
	p.add("p1", []task.Row{{ID: "a", Fence: 1, Version: 2, Stage: 1}}) // older: ignored
	p.add("p2", []task.Row{{ID: "b", Fence: 1, Version: 5}})
	p.drop([]task.Row{{ID: "b", Fence: 1, Version: 6}})
	got := p.take()
	require.Len(t, got, 1)
	require.Len(t, got["p1"], 1)
	assert.Equal(t, 2, got["p1"][0].Stage)
	assert.Nil(t, p.take())

	fired := make(chan struct{}, 2)
	p.arm(time.Millisecond, func() { fired <- struct{}{} })
	select {
	case <-fired:
	case <-time.After(10 * time.Second):
		t.Fatal("an armed flush did not run")
	}
	p.take() // what a flush does: disarm
	p.stop()
	p.arm(time.Millisecond, func() { fired <- struct{}{} })
	select {
	case <-fired:
		t.Fatal("a flush was armed after stop")
	case <-time.After(100 * time.Millisecond):
	}
}
