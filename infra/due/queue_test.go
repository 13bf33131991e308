package due_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/due"
)

// Ids come out earliest first (ties by id), only once due; a new time moves an id, a removed
// one never comes out.
func TestQueueGivesTheDueIdsEarliestFirst(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var q due.Queue
	_, ok := q.Pop(t0.Add(time.Hour))
	require.False(t, ok, "an empty queue has nothing due")
	assert.True(t, q.Set("c", t0.Add(3*time.Second)), "the first id is the earliest")
	assert.True(t, q.Set("a", t0.Add(time.Second)))
	assert.False(t, q.Set("b", t0.Add(time.Second)), "a tie goes after, by id")
	assert.False(t, q.Set("d", t0.Add(4*time.Second)))
	assert.True(t, q.Set("d", t0), "moved earlier: now the earliest")
	assert.True(t, q.Remove("c"))
	assert.False(t, q.Remove("c"), "already out")
	assert.False(t, q.Has("c"))
	assert.True(t, q.Has("d"))
	require.Equal(t, 3, q.Len())
	next, ok := q.Next()
	require.True(t, ok)
	assert.Equal(t, t0, next)

	_, ok = q.Pop(t0.Add(-time.Nanosecond))
	assert.False(t, ok, "nothing is due before its time")
	var got []string
	for {
		id, ok := q.Pop(t0.Add(2 * time.Second))
		if !ok {
			break
		}
		got = append(got, id)
	}
	assert.Equal(t, []string{"d", "a", "b"}, got)
	assert.Zero(t, q.Len())
}
