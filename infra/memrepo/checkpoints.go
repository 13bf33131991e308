package memrepo

import (
	"context"

	"github.com/executor-dev/executor/domain/checkpoint"
)

// CheckpointStore is the in-memory checkpoint.Store.
type CheckpointStore struct{ db *DB }

var _ checkpoint.Store = (*CheckpointStore)(nil)

// Checkpoint returns the task's checkpoint.
func (s *CheckpointStore) Checkpoint(_ context.Context, taskID string) (*checkpoint.Checkpoint, error) {
	s.db.mu.RLock()
	cp, ok := s.db.ckpts[taskID]
	s.db.mu.RUnlock()
	if !ok {
		return nil, checkpoint.ErrNotFound
	}
	return cp.Clone(), nil
}
