package app

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/task"
)

// heldReader reads from held as a task store does: all or nothing, task.ErrNotFound when one
// id is missing. It counts its reads.
type heldReader struct {
	held  map[string]string
	err   error // returned by every read when set
	reads int
}

func (r *heldReader) read(_ context.Context, ids []string) ([]string, error) {
	r.reads++
	if r.err != nil {
		return nil, r.err
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		v, ok := r.held[id]
		if !ok {
			return nil, fmt.Errorf("%w: %s", task.ErrNotFound, id)
		}
		out[i] = v
	}
	return out, nil
}

func TestReadPresentListsTheMissingAndReadsTheRest(t *testing.T) {
	t.Parallel()
	ids := make([]string, 64)
	for i := range ids {
		ids[i] = fmt.Sprintf("t%02d", i)
	}
	tests := []struct {
		name     string
		lost     []int
		maxReads int
	}{
		{"none lost: one read", nil, 1},
		{"the first", []int{0}, 1 + 2*6},
		{"the last", []int{63}, 1 + 2*6},
		{"two apart", []int{5, 40}, 1 + 4*6},
		{"every one", allIndexes(64), 2*64 - 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &heldReader{held: map[string]string{}}
			for _, id := range ids {
				r.held[id] = "v" + id
			}
			var want []MissingTask
			for _, i := range tc.lost {
				delete(r.held, ids[i])
				want = append(want, MissingTask{TaskID: ids[i], Index: i})
			}
			got, missing, err := readPresent(context.Background(), ids, r.read)
			require.NoError(t, err)
			require.Equal(t, want, missing)
			for i, id := range ids {
				require.Equal(t, r.held[id], got[i], "ids[%d]", i) // "" for a missing one
			}
			require.LessOrEqual(t, r.reads, tc.maxReads)
		})
	}
}

func TestReadPresentReturnsOtherErrors(t *testing.T) {
	t.Parallel()
	errDown := errors.New("store down")
	r := &heldReader{err: errDown}
	_, _, err := readPresent(context.Background(), []string{"a", "b"}, r.read)
	require.ErrorIs(t, err, errDown)
}

func allIndexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
