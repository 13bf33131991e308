package redisrepo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/outage"
)

// The waits between two tries of a Shared store's write.
const (
	sharedRetryMin = 50 * time.Millisecond
	sharedRetryMax = 500 * time.Millisecond
)

// changeShared is change for a Shared store: Redis is the only source of truth, so a write
// that finds Redis away is sent again, the same write with the same token (a write whose
// reply was lost and that landed is then recognised as written, never a conflict with
// itself), until Redis answers or ctx ends (SharedWriteWait at most when ctx has no
// deadline); an outage never makes it on the mirror alone. Redis that lost data this executor
// wrote (an empty restart, a failover to a replica that lacked acknowledged writes) is the one
// case where memory holds the only copy: the write is then made on the mirror and journaled,
// as alone, and the write-back after the loss carries it with everything else
// (docs/degraded.md, "Redis lost its data"), unless ctx is marked task.MustShare (an
// operator's command on what another executor may run): journaled, it would take effect
// only at the write-back, maybe after the run it meant to change completed elsewhere, so it
// fails instead. A run's write (ctx made task.WhileHeld) is not sent, first or again, once the
// run's lease has passed its deadline.
func (s *Store) changeShared(ctx context.Context, online, offline func() error, plans, tasks []string) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, SharedWriteWait)
		defer cancel()
	}
	wait := sharedRetryMin
	for {
		if !task.Held(ctx) {
			return fmt.Errorf("redisrepo: a write of a run past its lease's deadline, not sent: %w", task.ErrLeaseExpired)
		}
		err := online()
		if !s.mon.Fail(err) {
			return err
		}
		s.written.clear() // the next try, or the next write, sends whole tasks
		if s.afterFail != nil {
			s.afterFail()
		}
		if errors.Is(err, outage.ErrDataLost) {
			s.watch.lostData.Store(true)
			if task.MustBeShared(ctx) {
				return fmt.Errorf("redisrepo: a write other executors must see, refused: %w", err)
			}
			if done, jerr := s.back.journaled(offline, plans, tasks); done {
				return jerr
			}
			continue // the write-back is over already: write online
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("redisrepo: a write refused while redis is away: %w", err)
		case <-t.C:
		}
		wait = min(2*wait, sharedRetryMax)
	}
}

// absent checks, on a Shared store, a read of one plan, task or tenant that Redis answered it
// does not hold (err: task.ErrNotFound or plan.ErrNotFound): Redis may have lost it (it
// restarted empty) without this executor noticing yet, while the executor that holds it has
// not written it back. It asks Redis (the generation, one round trip): within the wait after a
// loss (it may find the loss itself) the read fails with the *task.ClaimsPausedError, and with
// the Redis error when that check fails, never a not found that may not be true. Otherwise,
// and on an alone store, err is returned as it is.
func (s *Store) absent(ctx context.Context, err error) error {
	if !s.shared || !(errors.Is(err, task.ErrNotFound) || errors.Is(err, plan.ErrNotFound)) {
		return err
	}
	if werr := s.watch.claimsAllowed(ctx); werr != nil {
		return fmt.Errorf("redisrepo: not found in Redis, which lost its data lately and may not hold it again yet: %w", werr)
	}
	return err
}
