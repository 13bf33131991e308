package redisrepo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/outage"
)

// TranscriptStore keeps what stage attempts printed: one hash per task (rediskey's
// Transcripts), one field per attempt, at most task.TranscriptsKept, with the task's TTL
// (keep_transcript.lua; retain gives it the plan's retention with the task's keys). They are
// diagnostics: while Redis is away (degraded, alone) a transcript is dropped, not journaled,
// and a read finds none.
type TranscriptStore struct{ s *Store }

// Transcripts returns the transcript store.
func (s *Store) Transcripts() *TranscriptStore { return &TranscriptStore{s: s} }

// transcriptJSON is a transcript as Redis holds it.
type transcriptJSON struct {
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
}

// KeepTranscript keeps t as what attempt key of task taskID printed, replacing what was kept
// for that key; beyond task.TranscriptsKept the task's oldest go. One script on the runs'
// pipeline, tried once: a task Redis does not hold keeps nothing (task.ErrNotFound); while
// Redis is away (degraded, alone) nothing is sent and the transcript is dropped.
func (ts *TranscriptStore) KeepTranscript(ctx context.Context, taskID string, key task.AttemptKey, t stage.Transcript) error {
	s := ts.s
	if !s.shared && s.degraded() {
		return fmt.Errorf("redisrepo: transcript of task %s dropped: redis is away", taskID)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // scripts print < and >: kept as they are, not as \u003c
	if err := enc.Encode(transcriptJSON{Stdout: t.Stdout, Stderr: t.Stderr}); err != nil {
		return fmt.Errorf("redisrepo: transcript of task %s: %w", taskID, err)
	}
	keys := []string{s.keys.Transcripts(taskID), s.keys.Task(taskID)}
	n, err := keepTranscriptScript.Run(ctx, s.batched, keys,
		transcriptField(key), bytes.TrimSuffix(b.Bytes(), []byte("\n")), task.TranscriptsKept).Int()
	if err != nil {
		if s.mon.Fail(err) && errors.Is(err, outage.ErrDataLost) {
			s.watch.lostData.Store(true)
		}
		return wrap("keep transcript", err)
	}
	if n == 0 {
		return fmt.Errorf("redisrepo: transcript of task %s: %w", taskID, task.ErrNotFound)
	}
	return nil
}

// Transcripts returns every transcript kept of task taskID, by attempt (none: empty). While
// Redis is away (degraded, alone) there are none: they are not mirrored.
func (ts *TranscriptStore) Transcripts(ctx context.Context, taskID string) (map[task.AttemptKey]stage.Transcript, error) {
	return read(ts.s, func() (map[task.AttemptKey]stage.Transcript, error) { return ts.transcriptsOnline(ctx, taskID) },
		func() (map[task.AttemptKey]stage.Transcript, error) {
			return map[task.AttemptKey]stage.Transcript{}, nil
		})
}

// transcriptsOnline reads the task's transcripts from Redis; a field it cannot read is
// skipped (diagnostics: what else the task kept is still shown).
func (ts *TranscriptStore) transcriptsOnline(ctx context.Context, taskID string) (map[task.AttemptKey]stage.Transcript, error) {
	return transcriptsOf(ts.s.client.HGetAll(ctx, ts.s.keys.Transcripts(taskID)))
}

// transcriptsOf decodes a read of a task's transcripts hash.
func transcriptsOf(get *redis.MapStringStringCmd) (map[task.AttemptKey]stage.Transcript, error) {
	fields, err := get.Result()
	if err != nil {
		return nil, wrap("read transcripts", err)
	}
	out := make(map[task.AttemptKey]stage.Transcript, len(fields))
	for f, v := range fields {
		key, ok := parseTranscriptField(f)
		var t transcriptJSON
		if !ok || json.Unmarshal([]byte(v), &t) != nil {
			continue
		}
		out[key] = stage.Transcript{Stdout: t.Stdout, Stderr: t.Stderr}
	}
	return out, nil
}

// transcriptField is an attempt's field in its task's transcripts hash:
// "<stageIndex>:<run>:<attempt>".
func transcriptField(k task.AttemptKey) string {
	return strconv.Itoa(k.StageIndex) + ":" + strconv.Itoa(k.Run) + ":" + strconv.Itoa(k.Attempt)
}

// parseTranscriptField reads a transcriptField.
func parseTranscriptField(f string) (task.AttemptKey, bool) {
	parts := strings.Split(f, ":")
	if len(parts) != 3 {
		return task.AttemptKey{}, false
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil {
			return task.AttemptKey{}, false
		}
		n[i] = v
	}
	return task.AttemptKey{StageIndex: n[0], Run: n[1], Attempt: n[2]}, true
}

// LatestWithTranscripts returns the tenant's latest task, its checkpoint (nil when it has
// none) and its transcripts, read together: on Redis two round trips (the tenant's index,
// then the task, its checkpoint and its transcripts pipelined), or one when the store
// remembers the tenant's latest task (latestWithCheckpointOnline), where reading the
// transcripts apart takes a third once the task is known. While Redis is away (degraded,
// alone) the task and checkpoint are the mirror's, and there are no transcripts.
func (ts *TranscriptStore) LatestWithTranscripts(ctx context.Context, tenantID string) (*task.Task, *checkpoint.Checkpoint, map[task.AttemptKey]stage.Transcript, error) {
	type all struct {
		t   *task.Task
		cp  *checkpoint.Checkpoint
		out map[task.AttemptKey]stage.Transcript
	}
	tasks := ts.s.Tasks()
	v, err := read(ts.s, func() (all, error) {
		var get *redis.MapStringStringCmd
		t, cp, err := tasks.latestWithCheckpointOnline(ctx, tenantID, func(p redis.Pipeliner, id string) {
			get = p.HGetAll(ctx, ts.s.keys.Transcripts(id))
		})
		if err != nil {
			return all{}, err
		}
		out, err := transcriptsOf(get)
		return all{t, cp, out}, err
	}, func() (all, error) {
		t, cp, err := tasks.latestWithCheckpointMirror(ctx, tenantID)
		return all{t, cp, map[task.AttemptKey]stage.Transcript{}}, err
	})
	return v.t, v.cp, v.out, ts.s.absent(ctx, err)
}
