package memrepo_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/memrepo"
)

// A task's transcripts go with it: when a bounded mirror evicts it, and when it is forgotten.
func TestTranscriptsGoWithTheirTask(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := memrepo.NewMirror(memrepo.MirrorOptions{CacheTasks: 1})
	p, tasks := newTasks(t, "out", 3)
	require.NoError(t, db.CreatePlan(ctx, p, tasks))
	k := task.AttemptKey{StageIndex: 0, Run: 1, Attempt: 1}
	for _, tk := range tasks {
		require.NoError(t, db.Transcripts().KeepTranscript(ctx, tk.ID(), k, stage.Transcript{Stdout: tk.TenantID()}))
	}
	kept := func(tk *task.Task) bool {
		t.Helper()
		got, err := db.Transcripts().Transcripts(ctx, tk.ID())
		require.NoError(t, err)
		return len(got) > 0
	}

	db.Tasks().Put(tasks[0], complete(t, tasks[0]))
	db.Tasks().Put(tasks[1], complete(t, tasks[1])) // the cache holds one ended task: tasks[0] goes
	assert.False(t, kept(tasks[0]), "evicted with its task")
	assert.True(t, kept(tasks[1]))
	db.Tasks().Forget(tasks[2].ID())
	assert.False(t, kept(tasks[2]), "forgotten with its task")
	err := db.Transcripts().KeepTranscript(ctx, tasks[2].ID(), k, stage.Transcript{Stdout: "late"})
	require.ErrorIs(t, err, task.ErrNotFound, "no task held, nothing kept")
}
