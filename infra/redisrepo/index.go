package redisrepo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/task"
)

// indexBatch bounds the rows of one index_tasks.lua call (a plan's creation indexes its every
// task in calls of this many).
const indexBatch = 500

// created records the rows of tasks just created in their plans' indexes (putNew); a
// failure keeps them for a later index write, as write does.
func (ix *planIndex) created(ctx context.Context, tasks []*task.Task) {
	ix.writeRows(ctx, rowsByPlan(tasks), ix.putNew)
}

// rowsByPlan returns the rows of tasks by plan id.
func rowsByPlan(tasks []*task.Task) map[string][]task.Row {
	byPlan := make(map[string][]task.Row, 1)
	for _, t := range tasks {
		byPlan[t.PlanID()] = append(byPlan[t.PlanID()], task.RowOf(t))
	}
	return byPlan
}

// write records the rows of tasks in their plans' indexes (index_tasks.lua) now; a row of
// theirs that waits (deferred) is superseded. A failure keeps the rows for a later index
// write (indexRetry): the tasks are saved, their index catches up.
func (ix *planIndex) write(ctx context.Context, tasks ...*task.Task) {
	byPlan := rowsByPlan(tasks)
	for _, rows := range byPlan {
		ix.pending.drop(rows)
	}
	ix.writeRows(ctx, byPlan, ix.put)
}

// deferRow records t's row within Options.IndexDelay, with the rows of the other writes
// meanwhile, as one index_tasks.lua call per plan (a task's rows meanwhile as one), or before
// the next read of an index by this executor: for a task that was RUNNING, whose row a reader
// of the index does not trust (it reads the tasks the index holds RUNNING and re-indexes
// those that moved on, see app's summaryOf), so that what it reports of them is never older
// than Redis. A reader of another executor sees the stage a task is at up to IndexDelay late.
func (ix *planIndex) deferRow(t *task.Task) {
	ix.pending.add(t.PlanID(), []task.Row{task.RowOf(t)})
	ix.pending.arm(ix.pending.delay, ix.flush)
}

// flush writes the rows that wait (deferred ones, failed ones), if any.
func (ix *planIndex) flush() {
	byPlan := ix.pending.take()
	if byPlan == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), ix.s.probeWait)
	defer cancel()
	ix.writeRows(ctx, byPlan, ix.put)
}

// writeRows writes each plan's rows with write; the rows of a plan whose write fails wait
// for the next flush, in indexRetry.
func (ix *planIndex) writeRows(ctx context.Context, byPlan map[string][]task.Row,
	write func(ctx context.Context, planID string, rows []task.Row) error,
) {
	for planID, rows := range byPlan {
		if err := write(ctx, planID, rows); err != nil {
			ix.pending.add(planID, rows)
			if !errors.Is(err, redis.ErrClosed) { // a closed client: the store is done
				ix.pending.arm(indexRetry, ix.flush)
			}
			ix.s.log.Debug("plan index: write failed; written again later", "plan_id", planID, "rows", len(rows), "err", err)
		}
	}
}

// put runs index_tasks.lua for rows of plan planID: one call on the batched client for
// a few rows (a run's write), pipelined calls of indexBatch rows for many (a creation).
func (ix *planIndex) put(ctx context.Context, planID string, rows []task.Row) error {
	keys := []string{ix.s.keys.PlanRows(planID), ix.s.keys.PlanCounts(planID), ix.s.keys.PlanRunning(planID), ix.s.keys.Plan(planID)}
	if len(rows) <= indexBatch {
		return indexTasksScript.Run(ctx, ix.s.batched, keys, rowArgs(rows)...).Err()
	}
	_, err := ix.s.execScripts(ctx, func(pipe redis.Pipeliner) {
		for start := 0; start < len(rows); start += indexBatch {
			indexTasksScript.EvalSha(ctx, pipe, keys, rowArgs(rows[start:min(start+indexBatch, len(rows))])...)
		}
	})
	return err
}

func rowArgs(rows []task.Row) []any {
	args := make([]any, 0, 9*len(rows))
	for _, r := range rows {
		args = append(args, r.ID, r.Fence, r.Version, string(r.Status), r.Stage, r.Class,
			r.Since.UnixMilli(), r.TenantID, r.Message)
	}
	return args
}

// Summary returns the summary of the plan's tasks as its index in Redis holds them (an empty
// one for a plan without an index: created before there was one, or expired); while Redis is
// away, as the mirror's index holds them (the tasks this executor holds).
func (r *TaskRepo) Summary(ctx context.Context, planID string) (task.Summary, error) {
	return read(r.s, func() (task.Summary, error) { return r.summaryOnline(ctx, planID) },
		func() (task.Summary, error) { return r.s.mirror.Tasks().Summary(ctx, planID) })
}

func (r *TaskRepo) summaryOnline(ctx context.Context, planID string) (task.Summary, error) {
	s := r.s
	s.index.flush() // this executor's deferred rows first: it reads what it wrote
	var counts *redis.MapStringStringCmd
	var slowest *redis.ZSliceCmd
	if _, err := s.exec(ctx, func(pipe redis.Pipeliner) {
		counts = pipe.HGetAll(ctx, s.keys.PlanCounts(planID))
		slowest = pipe.ZRangeWithScores(ctx, s.keys.PlanRunning(planID), 0, task.SlowestLen-1)
	}); err != nil {
		return task.Summary{}, wrap("read plan summary", err)
	}
	sum := task.NewSummary()
	samples := map[string]string{}
	for f, v := range counts.Val() {
		kind, rest, _ := strings.Cut(f, ":")
		if kind == "x" {
			samples[rest] = v
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n == 0 {
			continue
		}
		switch kind {
		case "total":
			sum.Total = n
		case "s":
			sum.Statuses[task.Status(rest)] = n
		case "m":
			stage, status, _ := strings.Cut(rest, ":")
			i, err := strconv.Atoi(stage)
			if err != nil {
				continue
			}
			if sum.Stages[i] == nil {
				sum.Stages[i] = map[task.Status]int{}
			}
			sum.Stages[i][task.Status(status)] = n
		case "c":
			c := sum.Classes[rest]
			c.Count = n
			sum.Classes[rest] = c
		}
	}
	for class, c := range sum.Classes {
		c.TenantID, c.Message, _ = strings.Cut(samples[class], "|")
		sum.Classes[class] = c
	}
	if z := slowest.Val(); len(z) > 0 {
		ids := make([]string, len(z))
		for i, m := range z {
			ids[i] = m.Member.(string)
		}
		rows, err := s.client.HMGet(ctx, s.keys.PlanRows(planID), ids...).Result()
		if err != nil {
			return task.Summary{}, wrap("read plan summary", err)
		}
		for i, v := range rows {
			if str, ok := v.(string); ok {
				if row, err := parseRow(ids[i], str); err == nil && row.Status == task.Running {
					sum.Slowest = append(sum.Slowest, row)
				}
			}
		}
	}
	return sum, nil
}

// Rows returns the rows of the plan's indexed tasks by task id (the mirror's while Redis is
// away).
func (r *TaskRepo) Rows(ctx context.Context, planID string) (map[string]task.Row, error) {
	return read(r.s, func() (map[string]task.Row, error) { return r.rowsOnline(ctx, planID) },
		func() (map[string]task.Row, error) { return r.s.mirror.Tasks().Rows(ctx, planID) })
}

func (r *TaskRepo) rowsOnline(ctx context.Context, planID string) (map[string]task.Row, error) {
	r.s.index.flush() // this executor's deferred rows first: it reads what it wrote
	h, err := r.s.client.HGetAll(ctx, r.s.keys.PlanRows(planID)).Result()
	if err != nil {
		return nil, wrap("read plan index", err)
	}
	out := make(map[string]task.Row, len(h))
	for id, v := range h {
		row, err := parseRow(id, v)
		if err != nil {
			return nil, err
		}
		out[id] = row
	}
	return out, nil
}

// Reindex records the rows of tasks, read from the store, in their plans' indexes (a later
// write a row holds stands): the index of a plan created before there was one, or behind.
func (r *TaskRepo) Reindex(ctx context.Context, tasks []*task.Task) error {
	for planID, rows := range rowsByPlan(tasks) {
		if err := r.s.index.put(ctx, planID, rows); err != nil {
			return wrap("reindex", err)
		}
	}
	return r.s.mirror.Tasks().Reindex(ctx, tasks)
}

// ForgetRows drops the rows of ids, tasks of the plan the store no longer holds (a reader found
// them gone), from the plan's index with their counts (forget_rows.lua).
func (r *TaskRepo) ForgetRows(ctx context.Context, planID string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	s := r.s
	keys := []string{s.keys.PlanRows(planID), s.keys.PlanCounts(planID), s.keys.PlanRunning(planID)}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	if err := forgetRowsScript.Run(ctx, s.client, keys, args...).Err(); err != nil {
		return wrap("forget index rows", err)
	}
	return nil
}

// parseRow decodes a row of the index (fence|version|status|stage|class|sinceMs|tenant|message).
func parseRow(id, v string) (task.Row, error) {
	parts := strings.SplitN(v, "|", 8)
	if len(parts) != 8 {
		return task.Row{}, fmt.Errorf("redisrepo: index row of %s: %q", id, v)
	}
	fence, err1 := strconv.ParseUint(parts[0], 10, 64)
	version, err2 := strconv.ParseUint(parts[1], 10, 64)
	stage, err3 := strconv.Atoi(parts[3])
	since, err4 := strconv.ParseInt(parts[5], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return task.Row{}, fmt.Errorf("redisrepo: index row of %s: %q", id, v)
	}
	return task.Row{ID: id, Fence: fence, Version: version, Status: task.Status(parts[2]), Stage: stage,
		Class: parts[4], Since: time.UnixMilli(since).UTC(), TenantID: parts[6], Message: parts[7]}, nil
}

// Running returns the ids of the plan's RUNNING tasks as its index holds them (the mirror's
// while Redis is away).
func (r *TaskRepo) Running(ctx context.Context, planID string) ([]string, error) {
	return read(r.s, func() ([]string, error) {
		r.s.index.flush()
		ids, err := r.s.client.ZRange(ctx, r.s.keys.PlanRunning(planID), 0, -1).Result()
		if err != nil {
			return nil, wrap("read plan index", err)
		}
		return ids, nil
	}, func() ([]string, error) { return r.s.mirror.Tasks().Running(ctx, planID) })
}
