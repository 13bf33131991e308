package redisrepo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/checkpoint"
)

func encCheckpoint(cp *checkpoint.Checkpoint) ([]byte, error) { return json.Marshal(cp.State()) }

// Checkpoint returns the task's checkpoint as Redis holds it.
func (c *CheckpointStore) checkpointOnline(ctx context.Context, taskID string) (*checkpoint.Checkpoint, error) {
	b, err := c.s.client.Get(ctx, c.s.keys.Checkpoint(taskID)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, checkpoint.ErrNotFound
	}
	if err != nil {
		return nil, wrap("read checkpoint", err)
	}
	var st checkpoint.State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("redisrepo: decode checkpoint %s: %w", taskID, err)
	}
	cp, err := checkpoint.Load(st)
	if err != nil {
		return nil, fmt.Errorf("redisrepo: checkpoint %s: %w", taskID, err)
	}
	return c.s.mirror.Checkpoints().PutIfNewer(cp), nil
}
