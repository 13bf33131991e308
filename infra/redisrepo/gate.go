package redisrepo

import (
	"errors"

	"github.com/executor-dev/executor/infra/outage"
)

// degraded reports whether Redis is away: operations then run on the mirror.
func (s *Store) degraded() bool {
	d, _ := s.mon.Degraded()
	return d
}

// read answers from Redis, or from the mirror while Redis is away (or when this read finds it
// away).
func read[T any](s *Store, online, offline func() (T, error)) (T, error) {
	if !s.degraded() {
		v, err := online()
		if !s.mon.Fail(err) {
			return v, err
		}
		if errors.Is(err, outage.ErrDataLost) {
			s.lostData.Store(true)
		}
	}
	return offline()
}

// change writes to Redis, or, while Redis is away (or when this write finds it away), to the
// mirror alone, journaling the aggregates it changed for the write-back. A write that failed
// half-way is harmless: the write-back writes the full latest state, fenced.
func (s *Store) change(online, offline func() error, plans, tasks []string) error {
	for {
		if !s.degraded() {
			err := online()
			if !s.mon.Fail(err) {
				return err
			}
			s.written.clear() // the write-back will write whole tasks
			if errors.Is(err, outage.ErrDataLost) {
				s.lostData.Store(true)
			}
		}
		if done, err := s.journaled(offline, plans, tasks); done {
			return err
		}
		// Redis came back between the check and the journal: write online.
	}
}

// journaled runs offline and journals plans and tasks, as one step against the write-back's
// last pass; done is false when Redis came back meanwhile (nothing was done).
func (s *Store) journaled(offline func() error, plans, tasks []string) (done bool, err error) {
	j := s.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	if !s.degraded() {
		return false, nil
	}
	if err := offline(); err != nil {
		return true, err
	}
	for _, id := range plans {
		j.plans[id] = true
	}
	for _, id := range tasks {
		j.tasks[id] = true
	}
	return true, nil
}

// ids lists the ids of tasks.
func taskIDs[T interface{ ID() string }](items []T) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID()
	}
	return out
}
