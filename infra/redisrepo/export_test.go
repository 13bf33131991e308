package redisrepo

import "github.com/executor-dev/executor/infra/memrepo"

// Mirror returns the store's in-memory mirror, for tests to see what it holds.
func (s *Store) Mirror() *memrepo.DB { return s.mirror }
