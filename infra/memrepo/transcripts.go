package memrepo

import (
	"context"
	"fmt"
	"maps"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// TranscriptStore keeps what stage attempts printed, at most task.TranscriptsKept per task,
// and forgets them with their task (a bounded mirror's eviction).
type TranscriptStore struct{ db *DB }

// Transcripts returns the transcript store.
func (db *DB) Transcripts() *TranscriptStore { return &TranscriptStore{db: db} }

// KeepTranscript keeps t as what attempt key of task taskID printed, replacing what was kept
// for that key; the task's oldest transcript goes beyond task.TranscriptsKept. A task the
// store does not hold keeps nothing: task.ErrNotFound.
func (s *TranscriptStore) KeepTranscript(_ context.Context, taskID string, key task.AttemptKey, t stage.Transcript) error {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	if _, ok := s.db.tasks[taskID]; !ok {
		return fmt.Errorf("memrepo: transcript of task %s: %w", taskID, task.ErrNotFound)
	}
	kept := s.db.outs[taskID]
	if kept == nil {
		kept = map[task.AttemptKey]stage.Transcript{}
		s.db.outs[taskID] = kept
	}
	kept[key] = t
	if len(kept) > task.TranscriptsKept {
		delete(kept, oldest(kept))
	}
	return nil
}

// Transcripts returns every transcript kept of task taskID, by attempt (none: empty).
func (s *TranscriptStore) Transcripts(_ context.Context, taskID string) (map[task.AttemptKey]stage.Transcript, error) {
	s.db.mu.RLock()
	defer s.db.mu.RUnlock()
	out := maps.Clone(s.db.outs[taskID])
	if out == nil {
		out = map[task.AttemptKey]stage.Transcript{}
	}
	return out, nil
}

// LatestWithTranscripts returns the tenant's latest task, its checkpoint (nil when it has
// none) and its transcripts, read in one step.
func (s *TranscriptStore) LatestWithTranscripts(_ context.Context, tenantID string) (*task.Task, *checkpoint.Checkpoint, map[task.AttemptKey]stage.Transcript, error) {
	s.db.mu.RLock()
	defer s.db.mu.RUnlock()
	t, ok := s.db.tasks[s.db.tenants[tenantID]]
	if !ok {
		return nil, nil, nil, task.ErrNotFound
	}
	var cp *checkpoint.Checkpoint
	if stored, ok := s.db.ckpts[t.ID()]; ok {
		cp = stored.Clone()
	}
	out := maps.Clone(s.db.outs[t.ID()])
	if out == nil {
		out = map[task.AttemptKey]stage.Transcript{}
	}
	return t.Clone(), cp, out, nil
}

// oldest returns the key of kept that ran first.
func oldest(kept map[task.AttemptKey]stage.Transcript) task.AttemptKey {
	var first task.AttemptKey
	found := false
	for k := range kept {
		if !found || k.Compare(first) < 0 {
			first, found = k, true
		}
	}
	return first
}
