package redisrepo

import (
	"context"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"
)

// readyTTL bounds how long a readiness probe's key stays.
const readyTTL = 30 * time.Second

// Ready writes a fresh value to this executor's readiness key and reads it back (GETDEL), through the
// client in use: nil only when Redis (the master of the key's slot, on a cluster; the master
// Sentinel names) takes a write and answers a read now. GET /readyz asks it.
// Probes run one at a time (concurrent ones would read each other's value).
func (s *Store) Ready(ctx context.Context) error {
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	key := s.ready
	want := ulid.Make().String()
	if err := s.client.Set(ctx, key, want, readyTTL).Err(); err != nil {
		return fmt.Errorf("redisrepo: readiness write: %w", err)
	}
	got, err := s.client.GetDel(ctx, key).Result() // read back, leaving nothing behind
	if err != nil {
		return fmt.Errorf("redisrepo: readiness read: %w", err)
	}
	if got != want {
		return fmt.Errorf("redisrepo: readiness read %q back, not the %q written", got, want)
	}
	return nil
}
