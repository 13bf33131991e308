package task_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/executor-dev/executor/domain/task"
)

func TestAttemptKeysOrderAsTheAttemptsRan(t *testing.T) {
	t.Parallel()
	key := func(stageIndex, run, attempt int) task.AttemptKey {
		return task.AttemptKey{StageIndex: stageIndex, Run: run, Attempt: attempt}
	}
	tests := []struct {
		name string
		a, b task.AttemptKey
		want int
	}{
		{"the same attempt", key(1, 2, 3), key(1, 2, 3), 0},
		{"a later attempt of the stage", key(1, 1, 1), key(1, 1, 2), -1},
		{"a later stage of the run", key(0, 1, 5), key(1, 1, 1), -1},
		{"a later run, at an earlier stage", key(3, 1, 1), key(0, 2, 1), -1},
		{"an earlier run", key(0, 2, 1), key(3, 1, 4), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.a.Compare(tt.b))
			assert.Equal(t, -tt.want, tt.b.Compare(tt.a))
		})
	}
	a := task.Attempt{StageIndex: 2, Stage: "deploy", Run: 3, Attempt: 4, Outcome: task.OutcomeFailed}
	assert.Equal(t, key(2, 3, 4), a.Key())
}
