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
	err := s.watch.touchSentinel(pctx)
	if err == nil {
		_, _, err = s.watch.checkGeneration(pctx) // the generation this executor starts from
	}
	if err == nil {
		err = s.watch.checkMasters(pctx) // the masters it starts with
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
	s.index.flush() // the rows deferred by the last writes
	s.index.pending.stop()
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
				s.mon.Fail(s.watch.checkData(ctx))
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
		err := s.back.resync(ctx)
		cancel()
		if err != nil {
			s.log.Debug("redis write-back not done yet", "err", err, "journal", s.back.journal.len())
			continue
		}
		backoff = probeMin
	}
}

// resync writes the journal back and leaves degraded mode once it is empty.
func (wb *writeBack) resync(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, wb.s.probeWait)
	err := wb.s.client.Ping(pctx).Err()
	cancel()
	if err != nil {
		return err
	}
	n, err := wb.s.client.Exists(ctx, wb.s.watch.instance).Result()
	if err != nil {
		return err
	}
	// A Redis Cluster master replaced during the outage (a failover) may have lost writes it
	// acknowledged: checkMasters then marks the loss (lostData).
	if err := wb.s.watch.checkMasters(ctx); err != nil && !errors.Is(err, outage.ErrDataLost) {
		return err
	}
	lost := n == 0 || wb.s.watch.lostData.Swap(false)
	if lost { // Redis lost its data (restarted empty): write everything back
		if wb.s.watch.rollback.Load() {
			wb.s.log.Warn("redis may lack writes it acknowledged (the master changed, or a task read older than written): writing back every plan and task this executor holds")
		} else {
			wb.s.log.Warn("redis came back without this executor's data: writing back every plan and task it holds")
		}
		if _, changed, err := wb.s.watch.checkGeneration(ctx); err != nil {
			return err
		} else if !changed && wb.s.watch.rollback.Load() {
			// Part of the data lost, the generation hash kept: a new generation, so that
			// every executor writes back and new claims wait.
			if err := wb.s.watch.renewGeneration(ctx); err != nil {
				return err
			}
		}
		wb.s.watch.rollback.Store(false)
		wb.journalEverything(wb.s.watch.gen.load())
	}
	for pass := 0; pass < lockedPasses && wb.journal.len() > 0; pass++ {
		if err := wb.writeBack(ctx); err != nil {
			return err
		}
	}
	// The last pass blocks writers, so nothing is journaled after it and before recovery.
	wb.journal.mu.Lock()
	defer wb.journal.mu.Unlock()
	if err := wb.writeBackLocked(ctx); err != nil {
		return err
	}
	if err := wb.s.watch.touchSentinel(ctx); err != nil {
		return err
	}
	if err := wb.s.audit.flush(ctx); err != nil { // the actions taken meanwhile: their records
		return err
	}
	wb.s.mon.Recover()
	if !lost {
		go wb.onRestored(false)
		return nil
	}
	// The other executors write back their copies within one lease TTL of the loss (the claims
	// pause, learnt by the generation check before the write-back): the tasks they ran to
	// their end, which this executor may hold as it accepted them, PENDING. What this one
	// queues again (onRestored) waits for them.
	// A generation learnt by that check (the loss was found by a missing key) is this loss's:
	// it is handled, not another one for the next outage to take for a loss.
	wb.s.watch.lostData.Store(false)
	wait, stop := wb.s.watch.gen.pausedFor(), wb.s.stop
	go func() {
		select {
		case <-time.After(wait):
			wb.onRestored(true)
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
func (wb *writeBack) journalEverything(generation string) {
	cutoff := time.Now().Add(-wb.s.ttl)
	plans, tasks := wb.s.mirror.Plans().States(), wb.s.mirror.Tasks().States()
	j := wb.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	var planIDs, taskIDs []string
	for _, p := range plans {
		ended := !p.FinishedAt.IsZero()
		if ended && !p.FinishedAt.After(cutoff) {
			continue // beyond its retention
		}
		if b, ok := j.plans[p.ID]; ok || ended || wb.s.mirror.Plans().Own(p.ID) {
			if !ok {
				b.version = int64(p.Version)
			}
			b.lost = generation
			j.plans[p.ID] = b
			planIDs = append(planIDs, p.ID)
		} else {
			wb.s.mirror.Plans().Forget(p.ID) // a stale copy: read from Redis again, not taken for a loss
		}
	}
	for _, t := range tasks {
		ended := t.Status.Terminal()
		if ended && !t.UpdatedAt.After(cutoff) {
			continue
		}
		if b, ok := j.tasks[t.ID]; ok || ended || wb.s.mirror.Tasks().Own(t.ID) {
			if !ok {
				b.version = int64(t.Version)
			}
			b.lost = generation
			j.tasks[t.ID] = b
			taskIDs = append(taskIDs, t.ID)
		} else {
			wb.s.mirror.Tasks().Forget(t.ID)
		}
	}
	wb.s.mirror.Pin(planIDs, taskIDs) // one evicted meanwhile is not written back: restore skips it
}

func (wb *writeBack) writeBack(ctx context.Context) error {
	plans, tasks := wb.journal.take()
	if err := wb.restore(ctx, plans, tasks); err != nil {
		wb.journal.putBack(plans, tasks)
		return err
	}
	wb.journal.mu.Lock()
	defer wb.journal.mu.Unlock()
	wb.unpinWritten(plans, tasks)
	return nil
}

// writeBackLocked is writeBack for a caller holding the journal's lock.
func (wb *writeBack) writeBackLocked(ctx context.Context) error {
	wb.s.written.clear() // whole tasks are written back behind it
	j := wb.journal
	if err := wb.restore(ctx, j.plans, j.tasks); err != nil {
		return err
	}
	plans, tasks := j.plans, j.tasks
	j.plans, j.tasks = map[string]base{}, map[string]base{}
	wb.unpinWritten(plans, tasks)
	return nil
}

// restore writes back plans and tasks from the mirror, each as a compare-and-set on its base
// version, in pipelined batches: plans first, so that every task written back finds its plan.
func (wb *writeBack) restore(ctx context.Context, planBases, taskBases map[string]base) error {
	var planList []*plan.Plan
	for _, id := range sortedIDs(planBases) {
		if p, err := wb.s.mirror.Plans().Plan(ctx, id); err == nil {
			planList = append(planList, p)
		}
	}
	for start := 0; start < len(planList); start += batchSize / 8 {
		batch := planList[start:min(start+batchSize/8, len(planList))]
		cmds := make([]*redis.Cmd, len(batch))
		var encErr error
		_, err := wb.s.execScripts(ctx, func(pipe redis.Pipeliner) {
			for i, p := range batch {
				fields, err := planFields(p, time.Now()) // the write-back is the latest change it knows
				if err != nil {
					encErr = err
					return
				}
				// This write-back's token, a status field: should its reply be lost, the next
				// pass knows it.
				b := planBases[p.ID()]
				b.doubts = append(b.doubts, wb.s.token())
				planBases[p.ID()] = b
				fields = append(fields[:2*planStatusPairs:2*planStatusPairs], append([]any{"wtoken", b.doubts[len(b.doubts)-1]}, fields[2*planStatusPairs:]...)...)
				cmds[i] = wb.s.queuePlan(ctx, pipe, p, b, planStatusPairs+1, fields)
			}
		})
		if err = firstErr(encErr, err); err != nil {
			return wrap("write back plans", err)
		}
		for i, p := range batch {
			if n, _ := cmds[i].Int(); n == conflict {
				wb.s.log.Warn("conflict on write-back: another executor changed the plan while Redis was away; Redis keeps its change",
					"plan_id", p.ID(), "status", p.Status())
				wb.s.mirror.Plans().Forget(p.ID())
			}
		}
	}
	var taskList []*task.Task
	for _, id := range sortedIDs(taskBases) {
		if t, err := wb.s.mirror.Tasks().Task(ctx, id); err == nil {
			taskList = append(taskList, t)
		}
	}
	for start := 0; start < len(taskList); start += batchSize / 4 {
		batch := taskList[start:min(start+batchSize/4, len(taskList))]
		if err := wb.restoreTasks(ctx, batch, taskBases); err != nil {
			return err
		}
	}
	return nil
}

// restoreTasks writes back a batch of tasks (restore_task.lua), then their tenants
// (restore_tenant.lua). A task another executor took meanwhile is a conflict: Redis keeps the
// other executor's state, the mirror forgets this one, and OnConflict stops the local run.
func (wb *writeBack) restoreTasks(ctx context.Context, tasks []*task.Task, bases map[string]base) error {
	cmds, err := wb.writeBackTasks(ctx, tasks, bases)
	if err != nil {
		return err
	}
	return wb.restoreTenants(ctx, wb.restored(ctx, tasks, bases, cmds), bases)
}

// writeBackTasks sends restore_task.lua for each task, in one pipeline, and returns the
// commands with their answers.
func (wb *writeBack) writeBackTasks(ctx context.Context, tasks []*task.Task, bases map[string]base) ([]*redis.Cmd, error) {
	cmds := make([]*redis.Cmd, len(tasks))
	var encErr error
	_, err := wb.s.exec(ctx, func(pipe redis.Pipeliner) {
		for i, t := range tasks {
			fields, err := taskFields(t)
			if err != nil {
				encErr = err
				return
			}
			cpJSON, cpNext := "", -1
			if cp, err := wb.s.mirror.Checkpoints().Checkpoint(ctx, t.ID()); err == nil {
				cpNext = cp.Next()
				b, err := encCheckpoint(cp)
				if err != nil {
					encErr = err
					return
				}
				cpJSON = string(b)
			}
			b := bases[t.ID()]
			// This write-back's token: should its reply be lost, the next pass knows it.
			b.doubts = append(b.doubts, wb.s.token())
			bases[t.ID()] = b
			args := append([]any{t.Fence(), wb.s.taskRetention(ctx, t), cpJSON, b.version, b.doubtList(wb.s.writer), t.Version(), b.lost, cpNext},
				append(fields, "fence", t.Fence(), "wtoken", b.doubts[len(b.doubts)-1])...)
			cmds[i] = restoreTaskScript.Eval(ctx, pipe, []string{wb.s.keys.Task(t.ID()), wb.s.keys.Checkpoint(t.ID())}, args...)
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
func (wb *writeBack) restored(ctx context.Context, tasks []*task.Task, bases map[string]base, cmds []*redis.Cmd) []*task.Task {
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
				wb.s.log.Info("write-back after Redis lost its data: Redis holds a newer copy of the task; this executor's is dropped",
					"task_id", t.ID(), "version", t.Version())
				wb.s.mirror.Tasks().Forget(t.ID())
				wb.onConflict(t.ID())
				wb.cancelWins(ctx, t)
				continue
			}
			// What Redis holds instead, for the log (a conflict is rare: one more read).
			held, _ := wb.s.client.HMGet(ctx, wb.s.keys.Task(t.ID()), "fence", "version", "status", "stage").Result()
			wb.s.log.Warn("write-back refused: Redis holds another writer's change", "task_id", t.ID(),
				"redis_fence_version_status_stage", fmt.Sprint(held), "fence", t.Fence(), "version", t.Version(),
				"base", bases[t.ID()].version, "doubts", bases[t.ID()].doubtList(wb.s.writer), "reply", fmt.Sprint(cmds[i].Val()), "cmd_err", fmt.Sprint(cmds[i].Err()))
			wb.conflict(t, "another executor took or changed the task while Redis was away")
			wb.cancelWins(ctx, t)
		}
	}
	return written
}

// restoreTenants points the tenants of the written tasks at them (restore_tenant.lua), indexes
// the tasks, and stops the run of a task whose tenant moved on meanwhile.
func (wb *writeBack) restoreTenants(ctx context.Context, written []*task.Task, bases map[string]base) error {
	tenantCmds := make([]*redis.Cmd, len(written))
	_, err := wb.s.exec(ctx, func(pipe redis.Pipeliner) {
		for i, t := range written {
			ended, lost := "0", "0"
			if t.Status().Terminal() {
				ended = "1"
			}
			if bases[t.ID()].lost != "" {
				lost = "1"
			}
			keys := []string{wb.s.keys.TenantIndex(t.TenantID()), wb.s.keys.TenantActive(t.TenantID())}
			tenantCmds[i] = restoreTenantScript.Eval(ctx, pipe, keys, t.ID(), wb.s.taskRetention(ctx, t), ended, lost)
		}
	})
	if err != nil {
		return wrap("write back tenants", err)
	}
	wb.s.index.write(ctx, written...)
	for i, t := range written {
		if n, _ := tenantCmds[i].Int(); n != 1 && !t.Status().Terminal() {
			reason := "another executor gave the tenant a new task while Redis was away"
			if bases[t.ID()].lost != "" {
				reason = "Redis lost its data and the tenant has a newer task: this copy is stale"
			}
			wb.conflict(t, reason)
		}
	}
	return nil
}

// conflict stops this executor's run of t, which Redis holds another writer's change of, and
// forgets its copy.
func (wb *writeBack) conflict(t *task.Task, reason string) {
	wb.s.log.Warn("conflict on write-back: this executor's run stops; Redis keeps the other executor's state",
		"task_id", t.ID(), "tenant_id", t.TenantID(), "plan_id", t.PlanID(), "reason", reason)
	wb.s.mirror.Tasks().Forget(t.ID())
	wb.onConflict(t.ID())
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
