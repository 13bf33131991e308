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
			s.lostData.Store(true)
		}
		return v, err
	}
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
// last pass; done is false when Redis came back meanwhile (nothing was done). What it journals
// is pinned in the mirror first (never evicted) until a write-back wrote it (unpinWritten).
func (s *Store) journaled(offline func() error, plans, tasks []string) (done bool, err error) {
	j := s.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	if !s.degraded() {
		return false, nil
	}
	pinnedPlans, pinnedTasks := s.mirror.Pin(plans, tasks)
	planBases, taskBases := s.bases(j.plans, plans, s.planVersion), s.bases(j.tasks, tasks, s.taskVersion)
	if err := offline(); err != nil {
		s.mirror.Unpin(pinnedPlans, pinnedTasks) // nothing journaled: as it was
		return true, err
	}
	for id, base := range planBases {
		j.plans[id] = base
	}
	for id, base := range taskBases {
		j.tasks[id] = base
	}
	return true, nil
}

// bases returns the base of each of ids not journaled yet: the mirror's version before this
// change (0 when the mirror does not hold it: it is being created now, and a creation that
// reached Redis in spite of a lost reply holds version 0), and the token of its write in
// doubt.
func (s *Store) bases(journaled map[string]base, ids []string, version func(id string) int64) map[string]base {
	out := make(map[string]base, len(ids))
	for _, id := range ids {
		if _, ok := journaled[id]; !ok {
			b := base{version: version(id)}
			if tok, ok := s.doubts.LoadAndDelete(id); ok {
				b.doubts = []string{tok.(string)}
			}
			out[id] = b
		}
	}
	return out
}

// inDoubt records that a write of aggregate id carrying token failed without a reply: it may
// have reached Redis (see base).
func (s *Store) inDoubt(id, token string) { s.doubts.Store(id, token) }

// planVersion is the mirror's version of plan id, or 0.
func (s *Store) planVersion(id string) int64 {
	p, err := s.mirror.Plans().Plan(context.Background(), id)
	if err != nil {
		return 0
	}
	return int64(p.Version())
}

// taskVersion is the mirror's version of task id, or 0.
func (s *Store) taskVersion(id string) int64 {
	t, err := s.mirror.Tasks().Task(context.Background(), id)
	if err != nil {
		return 0
	}
	return int64(t.Version())
}

// ids lists the ids of tasks.
func taskIDs[T interface{ ID() string }](items []T) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID()
	}
	return out
}
