package redisrepo

import (
	"context"
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
	if s.shared {
		v, err := online()
		if s.mon.Fail(err) && errors.Is(err, outage.ErrDataLost) {
			s.watch.lostData.Store(true)
		}
		return v, err
	}
	if !s.degraded() {
		v, err := online()
		if !s.mon.Fail(err) {
			return v, err
		}
		if errors.Is(err, outage.ErrDataLost) {
			s.watch.lostData.Store(true)
		}
	}
	return offline()
}

// change writes to Redis, or, while Redis is away (or when this write finds it away), to the
// mirror alone, journaling the aggregates it changed for the write-back. A write that failed
// half-way is harmless: the write-back writes the full latest state, fenced. When Redis is
// back before the change is journaled, online runs again: a write whose reply was lost may
// have landed, so online must send the same write (the caller's one token), which Redis then
// recognises as written, never a conflict with itself. A Shared store never makes a write on
// the mirror for an outage (changeShared). While change runs, reads from Redis do not record
// its aggregates in the mirror (inflight).
func (s *Store) change(ctx context.Context, online, offline func() error, plans, tasks []string) error {
	defer s.writing.begin(plans, tasks)()
	if s.shared {
		return s.changeShared(ctx, online, offline, plans, tasks)
	}
	for {
		if !s.degraded() {
			err := online()
			if !s.mon.Fail(err) {
				return err
			}
			s.written.clear() // the write-back will write whole tasks
			if s.afterFail != nil {
				s.afterFail()
			}
			if errors.Is(err, outage.ErrDataLost) {
				s.watch.lostData.Store(true)
			}
		}
		if done, err := s.back.journaled(offline, plans, tasks); done {
			return err
		}
		// Redis came back between the check and the journal: write online.
	}
}

// ids lists the ids of tasks.
func taskIDs[T interface{ ID() string }](items []T) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID()
	}
	return out
}
