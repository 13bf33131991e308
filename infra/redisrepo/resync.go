package redisrepo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/outage"
)

// Probe and write-back timing.
const (
	probeMin     = 100 * time.Millisecond
	probeMax     = 2 * time.Second
	probeTimeout = time.Second
	sentinelTTL  = 10 * time.Minute // a dead executor's sentinel goes away; a live one refreshes it every CheckEvery
	lockedPasses = 5                // write-back passes before the last one, which blocks writers
)

// Start checks Redis (an executor may start while it is down: it then runs degraded from the
// start; ctx bounds the check, at most a second) and starts the probe: while degraded it
// PINGs Redis with backoff and, when Redis answers, writes back everything journaled
// (everything in the mirror, when Redis came back empty) through the fenced scripts, then
// leaves degraded mode. Stop ends it. It never fails; only the first Start has an effect.
func (s *Store) Start(ctx context.Context) error {
	if s.done != nil {
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, s.probeWait)
	err := s.touchSentinel(pctx)
	if err == nil {
		_, _, err = s.checkGeneration(pctx) // the generation this executor starts from
	}
	if err == nil {
		err = s.checkMasters(pctx) // the masters it starts with
	}
	s.mon.Fail(err)
	cancel()
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go s.probe()
	return nil
}

// Stop ends the probe and waits for it (or gives up when ctx ends: the probe returns by
// itself then, after its write-back pass), then writes the index rows still deferred; none is
// written later. Stop is idempotent, and works without Start.
func (s *Store) Stop(ctx context.Context) error {
	var err error
	if s.stop != nil {
		close(s.stop)
		select {
		case <-s.done:
		case <-ctx.Done():
			err = fmt.Errorf("redisrepo: stop: %w", ctx.Err())
		}
		s.stop = nil
	}
	s.flushIndex() // the rows deferred by the last writes
	s.pending.stop()
	return err
}

func (s *Store) probe() {
	defer close(s.done)
	backoff := probeMin
	for {
		changed := s.mon.Changed()
		if !s.degraded() {
			select {
			case <-s.stop:
				return
			case <-changed:
			case <-time.After(s.leaseTTL / 3):
				ctx, cancel := context.WithTimeout(context.Background(), s.probeWait)
				s.mon.Fail(s.checkData(ctx))
				cancel()
			}
			backoff = probeMin
			continue
		}
		select {
		case <-s.stop:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, probeMax)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := s.resync(ctx)
		cancel()
		if err != nil {
			s.log.Debug("redis write-back not done yet", "err", err, "journal", s.journal.len())
			continue
		}
		backoff = probeMin
	}
}

// touchSentinel marks that this executor's Redis has its data (TTL: a dead executor's
// sentinel goes away).
func (s *Store) touchSentinel(ctx context.Context) error {
	return s.client.Set(ctx, s.instance, time.Now().UTC().Format(time.RFC3339), sentinelTTL).Err()
}

// checkData checks that Redis still holds what this executor saw: the generation (a changed
// one makes new claims wait, see claimsAllowed) and this executor's sentinel, refreshed only
// if it is there (SET XX). Either gone means that Redis lost this executor's data (restarted
// empty, flushed, failed over to an empty replica), which it reports as outage.ErrDataLost,
// so that everything is written back.
func (s *Store) checkData(ctx context.Context) error {
	if _, lost, err := s.checkGeneration(ctx); err != nil || lost {
		if err == nil {
			err = fmt.Errorf("redisrepo: the generation changed: %w", outage.ErrDataLost)
		}
		return err
	}
	ok, err := s.client.SetXX(ctx, s.instance, time.Now().UTC().Format(time.RFC3339), sentinelTTL).Result()
	if err != nil {
		return err
	}
	if !ok {
		s.lostData.Store(true)
		return fmt.Errorf("redisrepo: sentinel %s is gone: %w", s.instance, outage.ErrDataLost)
	}
	return s.checkMasters(ctx)
}

// resync writes the journal back and leaves degraded mode once it is empty.
func (s *Store) resync(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, s.probeWait)
	err := s.client.Ping(pctx).Err()
	cancel()
	if err != nil {
		return err
	}
	n, err := s.client.Exists(ctx, s.instance).Result()
	if err != nil {
		return err
	}
	// A Redis Cluster master replaced during the outage (a failover) may have lost writes it
	// acknowledged: checkMasters then marks the loss (lostData).
	if err := s.checkMasters(ctx); err != nil && !errors.Is(err, outage.ErrDataLost) {
		return err
	}
	lost := n == 0 || s.lostData.Swap(false)
	if lost { // Redis lost its data (restarted empty): write everything back
		if s.rollback.Load() {
			s.log.Warn("redis may lack writes it acknowledged (the master changed, or a task read older than written): writing back every plan and task this executor holds")
		} else {
			s.log.Warn("redis came back without this executor's data: writing back every plan and task it holds")
		}
		if _, changed, err := s.checkGeneration(ctx); err != nil {
			return err
		} else if !changed && s.rollback.Load() {
			// Part of the data lost, the generation hash kept: a new generation, so that
			// every executor writes back and new claims wait.
			if err := s.renewGeneration(ctx); err != nil {
				return err
			}
		}
		s.rollback.Store(false)
		s.journalEverything(s.gen.load())
	}
	for pass := 0; pass < lockedPasses && s.journal.len() > 0; pass++ {
		if err := s.writeBack(ctx); err != nil {
			return err
		}
	}
	// The last pass blocks writers, so nothing is journaled after it and before recovery.
	s.journal.mu.Lock()
	defer s.journal.mu.Unlock()
	if err := s.writeBackLocked(ctx); err != nil {
		return err
	}
	if err := s.touchSentinel(ctx); err != nil {
		return err
	}
	s.mon.Recover()
	if !lost {
		go s.onRestored(false)
		return nil
	}
	// The other executors write back their copies within one lease TTL of the loss (the claims
	// pause, learnt by the generation check before the write-back): the tasks they ran to
	// their end, which this executor may hold as it accepted them, PENDING. What this one
	// queues again (onRestored) waits for them.
	// A generation learnt by that check (the loss was found by a missing key) is this loss's:
	// it is handled, not another one for the next outage to take for a loss.
	s.lostData.Store(false)
	wait, stop := s.gen.pausedFor(), s.stop
	go func() {
		select {
		case <-time.After(wait):
			s.onRestored(true)
		case <-stop:
		}
	}()
	return nil
}

// journalEverything journals, for a Redis that lost its data, every aggregate of the mirror
// that has not expired and that this executor wrote (created, ran or changed), or that has
// ended, pinned until written back; everything journaled already too. The mirror holds every
// plan and task this executor runs or accepted that has not ended, and everything journaled,
// but of the ended ones only its cache (Options.CacheTasks): the others are not restored.
//
// Each is written back as base.lost says, with the generation of Redis's data since the loss:
// newest wins among the copies written back for this loss. Redis held nothing to compare
// with, and every executor writes back its own copies, some stale (the executor that created
// a task holds it PENDING while another ran it to its end): the copy at the highest version
// is the latest state (every change advances the version by a compare-and-set), whoever
// writes it back first. An aggregate Redis kept (the loss was found by another key, or was
// not one) is written back by the usual compare-and-set: diverging changes made while
// degraded (a cancel through another executor) are never overwritten by a higher version. A copy this executor only read and that has not ended is not written
// back: it is stale by nature (its tenant's runner holds the latest) and would hold the
// tenant for a task that may have ended. It is dropped from the mirror instead, so that its
// absence from Redis is not taken for another loss.
func (s *Store) journalEverything(generation string) {
	cutoff := time.Now().Add(-s.ttl)
	plans, tasks := s.mirror.Plans().States(), s.mirror.Tasks().States()
	j := s.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	var planIDs, taskIDs []string
	for _, p := range plans {
		ended := !p.FinishedAt.IsZero()
		if ended && !p.FinishedAt.After(cutoff) {
			continue // beyond its retention
		}
		if b, ok := j.plans[p.ID]; ok || ended || s.mirror.Plans().Own(p.ID) {
			if !ok {
				b.version = int64(p.Version)
			}
			b.lost = generation
			j.plans[p.ID] = b
			planIDs = append(planIDs, p.ID)
		} else {
			s.mirror.Plans().Forget(p.ID) // a stale copy: read from Redis again, not taken for a loss
		}
	}
	for _, t := range tasks {
		ended := t.Status.Terminal()
		if ended && !t.UpdatedAt.After(cutoff) {
			continue
		}
		if b, ok := j.tasks[t.ID]; ok || ended || s.mirror.Tasks().Own(t.ID) {
			if !ok {
				b.version = int64(t.Version)
			}
			b.lost = generation
			j.tasks[t.ID] = b
			taskIDs = append(taskIDs, t.ID)
		} else {
			s.mirror.Tasks().Forget(t.ID)
		}
	}
	s.mirror.Pin(planIDs, taskIDs) // one evicted meanwhile is not written back: restore skips it
}

func (s *Store) writeBack(ctx context.Context) error {
	plans, tasks := s.journal.take()
	if err := s.restore(ctx, plans, tasks); err != nil {
		s.journal.putBack(plans, tasks)
		return err
	}
	s.journal.mu.Lock()
	defer s.journal.mu.Unlock()
	s.unpinWritten(plans, tasks)
	return nil
}

// writeBackLocked is writeBack for a caller holding the journal's lock.
func (s *Store) writeBackLocked(ctx context.Context) error {
	s.written.clear() // whole tasks are written back behind it
	j := s.journal
	if err := s.restore(ctx, j.plans, j.tasks); err != nil {
		return err
	}
	plans, tasks := j.plans, j.tasks
	j.plans, j.tasks = map[string]base{}, map[string]base{}
	s.unpinWritten(plans, tasks)
	return nil
}

// restore writes back plans and tasks from the mirror, each as a compare-and-set on its base
// version, in pipelined batches: plans first, so that every task written back finds its plan.
func (s *Store) restore(ctx context.Context, planBases, taskBases map[string]base) error {
	var planList []*plan.Plan
	for _, id := range sortedIDs(planBases) {
		if p, err := s.mirror.Plans().Plan(ctx, id); err == nil {
			planList = append(planList, p)
		}
	}
	for start := 0; start < len(planList); start += batchSize / 8 {
		batch := planList[start:min(start+batchSize/8, len(planList))]
		cmds := make([]*redis.Cmd, len(batch))
		var encErr error
		_, err := s.execScripts(ctx, func(pipe redis.Pipeliner) {
			for i, p := range batch {
				fields, err := planFields(p, time.Now()) // the write-back is the latest change it knows
				if err != nil {
					encErr = err
					return
				}
				// This write-back's token, a status field: should its reply be lost, the next
				// pass knows it.
				b := planBases[p.ID()]
				b.doubts = append(b.doubts, s.token())
				planBases[p.ID()] = b
				fields = append(fields[:2*planStatusPairs:2*planStatusPairs], append([]any{"wtoken", b.doubts[len(b.doubts)-1]}, fields[2*planStatusPairs:]...)...)
				cmds[i] = s.queuePlan(ctx, pipe, p, b, planStatusPairs+1, fields)
			}
		})
		if err = firstErr(encErr, err); err != nil {
			return wrap("write back plans", err)
		}
		for i, p := range batch {
			if n, _ := cmds[i].Int(); n == conflict {
				s.log.Warn("conflict on write-back: another executor changed the plan while Redis was away; Redis keeps its change",
					"plan_id", p.ID(), "status", p.Status())
				s.mirror.Plans().Forget(p.ID())
			}
		}
	}
	var taskList []*task.Task
	for _, id := range sortedIDs(taskBases) {
		if t, err := s.mirror.Tasks().Task(ctx, id); err == nil {
			taskList = append(taskList, t)
		}
	}
	for start := 0; start < len(taskList); start += batchSize / 4 {
		batch := taskList[start:min(start+batchSize/4, len(taskList))]
		if err := s.restoreTasks(ctx, batch, taskBases); err != nil {
			return err
		}
	}
	return nil
}

// restoreTasks writes back a batch of tasks (restore_task.lua), then their tenants
// (restore_tenant.lua). A task another executor took meanwhile is a conflict: Redis keeps the
// other executor's state, the mirror forgets this one, and OnConflict stops the local run.
func (s *Store) restoreTasks(ctx context.Context, tasks []*task.Task, bases map[string]base) error {
	cmds, err := s.writeBackTasks(ctx, tasks, bases)
	if err != nil {
		return err
	}
	return s.restoreTenants(ctx, s.restored(ctx, tasks, bases, cmds), bases)
}

// writeBackTasks sends restore_task.lua for each task, in one pipeline, and returns the
// commands with their answers.
func (s *Store) writeBackTasks(ctx context.Context, tasks []*task.Task, bases map[string]base) ([]*redis.Cmd, error) {
	cmds := make([]*redis.Cmd, len(tasks))
	var encErr error
	_, err := s.exec(ctx, func(pipe redis.Pipeliner) {
		for i, t := range tasks {
			fields, err := taskFields(t)
			if err != nil {
				encErr = err
				return
			}
			cpJSON := ""
			if cp, err := s.mirror.Checkpoints().Checkpoint(ctx, t.ID()); err == nil {
				b, err := encCheckpoint(cp)
				if err != nil {
					encErr = err
					return
				}
				cpJSON = string(b)
			}
			b := bases[t.ID()]
			// This write-back's token: should its reply be lost, the next pass knows it.
			b.doubts = append(b.doubts, s.token())
			bases[t.ID()] = b
			args := append([]any{t.Fence(), s.taskRetention(ctx, t), cpJSON, b.version, b.doubtList(s.writer), t.Version(), b.lost},
				append(fields, "fence", t.Fence(), "wtoken", b.doubts[len(b.doubts)-1])...)
			cmds[i] = restoreTaskScript.Eval(ctx, pipe, []string{s.keys.Task(t.ID()), s.keys.Checkpoint(t.ID())}, args...)
		}
	})
	if err = firstErr(encErr, err); err != nil {
		return nil, wrap("write back tasks", err)
	}
	return cmds, nil
}

// restored returns the tasks Redis took (cmds answered), and deals with the others: dropped
// when Redis lost its data and holds a newer copy, a conflict when another writer changed
// the task while Redis was away.
func (s *Store) restored(ctx context.Context, tasks []*task.Task, bases map[string]base, cmds []*redis.Cmd) []*task.Task {
	var written []*task.Task
	for i, t := range tasks {
		switch n, _ := cmds[i].Int(); n {
		case 1:
			written = append(written, t)
		case 2: // Redis holds this very version: an earlier write-back's, whose reply was lost
			written = append(written, t)
		default:
			if bases[t.ID()].lost != "" {
				// Redis lost its data and another executor wrote back a newer copy first.
				s.log.Info("write-back after Redis lost its data: Redis holds a newer copy of the task; this executor's is dropped",
					"task_id", t.ID(), "version", t.Version())
				s.mirror.Tasks().Forget(t.ID())
				s.onConflict(t.ID())
				s.cancelWins(ctx, t)
				continue
			}
			// What Redis holds instead, for the log (a conflict is rare: one more read).
			held, _ := s.client.HMGet(ctx, s.keys.Task(t.ID()), "fence", "version", "status", "stage").Result()
			s.log.Warn("write-back refused: Redis holds another writer's change", "task_id", t.ID(),
				"redis_fence_version_status_stage", fmt.Sprint(held), "fence", t.Fence(), "version", t.Version(),
				"base", bases[t.ID()].version, "doubts", bases[t.ID()].doubtList(s.writer), "reply", fmt.Sprint(cmds[i].Val()), "cmd_err", fmt.Sprint(cmds[i].Err()))
			s.conflict(t, "another executor took or changed the task while Redis was away")
			s.cancelWins(ctx, t)
		}
	}
	return written
}

// restoreTenants points the tenants of the written tasks at them (restore_tenant.lua), indexes
// the tasks, and stops the run of a task whose tenant moved on meanwhile.
func (s *Store) restoreTenants(ctx context.Context, written []*task.Task, bases map[string]base) error {
	tenantCmds := make([]*redis.Cmd, len(written))
	_, err := s.exec(ctx, func(pipe redis.Pipeliner) {
		for i, t := range written {
			ended, lost := "0", "0"
			if t.Status().Terminal() {
				ended = "1"
			}
			if bases[t.ID()].lost != "" {
				lost = "1"
			}
			keys := []string{s.keys.TenantIndex(t.TenantID()), s.keys.TenantActive(t.TenantID())}
			tenantCmds[i] = restoreTenantScript.Eval(ctx, pipe, keys, t.ID(), s.taskRetention(ctx, t), ended, lost)
		}
	})
	if err != nil {
		return wrap("write back tenants", err)
	}
	s.indexTasks(ctx, written...)
	for i, t := range written {
		if n, _ := tenantCmds[i].Int(); n != 1 && !t.Status().Terminal() {
			reason := "another executor gave the tenant a new task while Redis was away"
			if bases[t.ID()].lost != "" {
				reason = "Redis lost its data and the tenant has a newer task: this copy is stale"
			}
			s.conflict(t, reason)
		}
	}
	return nil
}

// conflict stops this executor's run of t, which Redis holds another writer's change of, and
// forgets its copy.
func (s *Store) conflict(t *task.Task, reason string) {
	s.log.Warn("conflict on write-back: this executor's run stops; Redis keeps the other executor's state",
		"task_id", t.ID(), "tenant_id", t.TenantID(), "plan_id", t.PlanID(), "reason", reason)
	s.mirror.Tasks().Forget(t.ID())
	s.onConflict(t.ID())
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
