package redisrepo

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/checkpoint"
)

// Checkpoint returns the task's checkpoint as Redis holds it.
func (c *CheckpointStore) checkpointOnline(ctx context.Context, taskID string) (*checkpoint.Checkpoint, error) {
	return c.s.checkpointOf(taskID, c.s.client.Get(ctx, c.s.keys.Checkpoint(taskID)))
}

// checkpointOf decodes the reply to a GET of taskID's checkpoint and records it in the mirror
// (unless its task is being written: see inflight).
func (s *Store) checkpointOf(taskID string, get *redis.StringCmd) (*checkpoint.Checkpoint, error) {
	b, err := get.Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, checkpoint.ErrNotFound
	}
	if err != nil {
		return nil, wrap("read checkpoint", err)
	}
	cp, err := decCheckpoint(taskID, b)
	if err != nil {
		return nil, fmt.Errorf("redisrepo: checkpoint %s: %w", taskID, err)
	}
	if s.writing.has(taskID) {
		return cp, nil // its task's write records it (see inflight)
	}
	return s.mirror.Checkpoints().PutIfNewer(cp), nil
}
