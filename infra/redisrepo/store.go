package redisrepo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/infra/rediskey"
)

// DefaultTTL is how long plan, task, checkpoint and index keys live after their last write.
const DefaultTTL = 7 * 24 * time.Hour

// batchSize bounds the commands of one pipelined batch when a plan is created.
const batchSize = 512

// Options tunes a Store. Zero fields take defaults.
type Options struct {
	Keys rediskey.Keys // default rediskey.New("")
	TTL  time.Duration // default DefaultTTL
}

// Store is the Redis-backed store with its in-memory mirror.
type Store struct {
	client redis.UniversalClient
	keys   rediskey.Keys
	ttl    time.Duration
	mirror *memrepo.DB
}

// New returns a store on client.
func New(client redis.UniversalClient, opts Options) *Store {
	if opts.Keys == (rediskey.Keys{}) {
		opts.Keys = rediskey.New("")
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	return &Store{client: client, keys: opts.Keys, ttl: opts.TTL, mirror: memrepo.New()}
}

// Plans returns the plan repository.
func (s *Store) Plans() *PlanRepo { return &PlanRepo{s: s} }

// Tasks returns the task repository.
func (s *Store) Tasks() *TaskRepo { return &TaskRepo{s: s} }

// Checkpoints returns the checkpoint store.
func (s *Store) Checkpoints() *CheckpointStore { return &CheckpointStore{s: s} }

func (s *Store) ttlSeconds() int64 { return int64(s.ttl / time.Second) }

// wrap prefixes a Redis error; redis.Nil never gets here (callers map it to ErrNotFound).
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("redisrepo: %s: %w", op, err)
}

// isNoScript reports whether Redis lost its script cache (it restarted).
func isNoScript(err error) bool {
	return err != nil && redis.HasErrorPrefix(err, "NOSCRIPT")
}

// exec runs fill on a fresh pipeline and returns the commands, so callers read each result.
func (s *Store) exec(ctx context.Context, fill func(p redis.Pipeliner)) ([]redis.Cmder, error) {
	cmds, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error { fill(p); return nil })
	if errors.Is(err, redis.Nil) {
		err = nil // a GET that found nothing: callers read each command's own result
	}
	return cmds, err
}
