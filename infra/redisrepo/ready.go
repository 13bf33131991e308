package redisrepo

import (
	"context"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"
)

// readyTTL bounds how long a readiness probe's key stays.
const readyTTL = 30 * time.Second

// Ready writes a fresh value to this executor's readiness key and reads it back, through the
// client in use: nil only when Redis (the master of the key's slot, on a cluster; the master
// Sentinel names) takes a write and answers a read now. GET /readyz asks it.
func (s *Store) Ready(ctx context.Context) error {
	key := s.ready
	want := ulid.Make().String()
	if err := s.client.Set(ctx, key, want, readyTTL).Err(); err != nil {
		return fmt.Errorf("redisrepo: readiness write: %w", err)
	}
	got, err := s.client.Get(ctx, key).Result()
	if err != nil {
		return fmt.Errorf("redisrepo: readiness read: %w", err)
	}
	if got != want {
		return fmt.Errorf("redisrepo: readiness read %q back, not the %q written", got, want)
	}
	return nil
}
