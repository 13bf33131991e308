package redisrepo

import "github.com/executor-dev/executor/infra/memrepo"

// Mirror returns the store's in-memory mirror, for tests to see what it holds.
func (s *Store) Mirror() *memrepo.DB { return s.mirror }

// AfterOnlineFailure makes f run each time a change finds Redis away, before it journals:
// what a write-back that ends at that instant does (Redis is back, the change is sent again).
func (s *Store) AfterOnlineFailure(f func()) { s.afterFail = f }
