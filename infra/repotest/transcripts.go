package repotest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// Transcripts keeps what stage attempts printed beside a task's ledger
// (orchestrator.Transcripts and app.Transcripts together; repeated here so the suite depends
// on neither).
type Transcripts interface {
	KeepTranscript(ctx context.Context, taskID string, key task.AttemptKey, t stage.Transcript) error
	Transcripts(ctx context.Context, taskID string) (map[task.AttemptKey]stage.Transcript, error)
	LatestWithTranscripts(ctx context.Context, tenantID string) (*task.Task, *checkpoint.Checkpoint, map[task.AttemptKey]stage.Transcript, error)
}

// testLatestWithTranscripts: a tenant's latest task, its checkpoint and its transcripts, read
// together, are what LatestWithCheckpoint and Transcripts read one after the other; a tenant
// that moved on to a new task reads the new task, without the old task's checkpoint or
// transcripts.
func testLatestWithTranscripts(t *testing.T, s Store) {
	require.NotNil(t, s.Transcripts, "Store.Transcripts")
	ctx := t.Context()
	ran, fresh, run := ranAndFresh(t, s, "lwt")
	key := task.AttemptKey{StageIndex: 0, Run: 1, Attempt: 1}
	printed := stage.Transcript{Stdout: "deployed\n", Stderr: "warning: slow\n"}
	require.NoError(t, s.Transcripts.KeepTranscript(ctx, ran.ID(), key, printed))

	_, _, _, err := s.Transcripts.LatestWithTranscripts(ctx, "lwt-nobody")
	require.ErrorIs(t, err, task.ErrNotFound)

	got, cp, out, err := s.Transcripts.LatestWithTranscripts(ctx, "lwt-ran")
	require.NoError(t, err)
	want, wantCp, err := s.Tasks.LatestWithCheckpoint(ctx, "lwt-ran")
	require.NoError(t, err)
	requireSameTask(t, want, got)
	require.NotNil(t, cp)
	requireSameState(t, wantCp.State(), cp.State())
	assert.Equal(t, 1, cp.Next())
	assert.Equal(t, map[task.AttemptKey]stage.Transcript{key: printed}, out)

	got, cp, out, err = s.Transcripts.LatestWithTranscripts(ctx, "lwt-fresh")
	require.NoError(t, err)
	requireSameTask(t, fresh, got)
	assert.Nil(t, cp, "a task that ran no stage has no checkpoint")
	assert.Empty(t, out, "nor transcripts")

	endTask(t, s, run)
	next := newTask(t, ulid.Make().String(), "lwt-ran", at(10))
	createTasks(t, s, next)
	got, cp, out, err = s.Transcripts.LatestWithTranscripts(ctx, "lwt-ran")
	require.NoError(t, err)
	requireSameTask(t, next, got)
	assert.Nil(t, cp, "the tenant's new task has no checkpoint yet")
	assert.Empty(t, out, "nor the old task's transcripts")
}

// A transcript is kept by task and attempt, replaced by a later one of the same attempt, and
// read back whole, however it is spelled (quotes, newlines, markup, UTF-8); a task the store
// does not hold keeps none.
func testTranscriptsKeptByAttempt(t *testing.T, s Store) {
	require.NotNil(t, s.Transcripts, "Store.Transcripts")
	ctx := t.Context()
	planID := ulid.Make().String()
	a, b := newTask(t, planID, "acme", at(0)), newTask(t, planID, "globex", at(0))
	createTasks(t, s, a, b)

	first := task.AttemptKey{StageIndex: 0, Run: 1, Attempt: 1}
	second := task.AttemptKey{StageIndex: 0, Run: 1, Attempt: 2}
	odd := stage.Transcript{Stdout: "line \"1\"\n<b>bold</b> & é ✓\n", Stderr: "warning: \\ tab\there\n"}
	require.NoError(t, s.Transcripts.KeepTranscript(ctx, a.ID(), first, stage.Transcript{Stdout: "first try"}))
	require.NoError(t, s.Transcripts.KeepTranscript(ctx, a.ID(), first, odd), "the same attempt again: replaced")
	require.NoError(t, s.Transcripts.KeepTranscript(ctx, a.ID(), second, stage.Transcript{Stderr: "only stderr"}))
	require.NoError(t, s.Transcripts.KeepTranscript(ctx, b.ID(), first, stage.Transcript{Stdout: "b's"}))

	got, err := s.Transcripts.Transcripts(ctx, a.ID())
	require.NoError(t, err)
	assert.Equal(t, map[task.AttemptKey]stage.Transcript{first: odd, second: {Stderr: "only stderr"}}, got)
	got, err = s.Transcripts.Transcripts(ctx, b.ID())
	require.NoError(t, err)
	assert.Equal(t, map[task.AttemptKey]stage.Transcript{first: {Stdout: "b's"}}, got)

	unknown := ulid.Make().String()
	err = s.Transcripts.KeepTranscript(ctx, unknown, first, stage.Transcript{Stdout: "lost"})
	require.ErrorIs(t, err, task.ErrNotFound, "no task, no transcript")
	got, err = s.Transcripts.Transcripts(ctx, unknown)
	require.NoError(t, err)
	assert.Empty(t, got)
	big := stage.Transcript{Stdout: strings.Repeat("o", stage.TranscriptMax), Stderr: strings.Repeat("e", stage.TranscriptMax)}
	require.NoError(t, s.Transcripts.KeepTranscript(ctx, b.ID(), second, big))
	got, err = s.Transcripts.Transcripts(ctx, b.ID())
	require.NoError(t, err)
	assert.Equal(t, big, got[second], "two full tails")
}

// A task keeps at most task.TranscriptsKept transcripts: the attempts that ran last (by run,
// then stage, then attempt), whatever order they were written in; a stale run's older
// attempt written to a full task is dropped at once.
func testTranscriptsKeepTheLatest(t *testing.T, s Store) {
	require.NotNil(t, s.Transcripts, "Store.Transcripts")
	ctx := t.Context()
	tk := newTask(t, ulid.Make().String(), "acme", at(0))
	createTasks(t, s, tk)
	var keys []task.AttemptKey
	for run := 1; run <= 3; run++ {
		for stageIndex := 0; stageIndex < 2; stageIndex++ {
			for attempt := 1; attempt <= 4; attempt++ {
				keys = append(keys, task.AttemptKey{StageIndex: stageIndex, Run: run, Attempt: attempt})
			}
		}
	}
	require.Greater(t, len(keys), task.TranscriptsKept)
	// Written in run order but each run's stages backwards: the bound goes by when attempts
	// ran, not by when they were written.
	written := slices.Clone(keys)
	slices.SortStableFunc(written, func(x, y task.AttemptKey) int {
		if x.Run != y.Run {
			return x.Run - y.Run
		}
		return y.StageIndex - x.StageIndex
	})
	for _, k := range written {
		require.NoError(t, s.Transcripts.KeepTranscript(ctx, tk.ID(), k, stage.Transcript{Stdout: fmt.Sprint(k)}))
	}
	stale := task.AttemptKey{StageIndex: 0, Run: 1, Attempt: 9} // run 1 went on to stage 1
	require.NoError(t, s.Transcripts.KeepTranscript(ctx, tk.ID(), stale, stage.Transcript{Stdout: "stale"}))

	got, err := s.Transcripts.Transcripts(ctx, tk.ID())
	require.NoError(t, err)
	want := map[task.AttemptKey]stage.Transcript{}
	for _, k := range keys[len(keys)-task.TranscriptsKept:] {
		want[k] = stage.Transcript{Stdout: fmt.Sprint(k)}
	}
	assert.Equal(t, want, got)
}
