package redisrepo

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/task"
)

// newRowsBatch bounds the rows of one transaction of putNew.
const newRowsBatch = 2000

// putNew records the rows of tasks just created (no run has written them yet, and no
// earlier row of theirs exists) in their plan's index: per batch, one HSET of the rows and
// the counters' increments, in a MULTI (the rows and their counts land together or not at
// all), one round trip per batch. index_tasks.lua's checks, row by row, made a 100,000-tenant creation spend half a
// second of Redis's time on them. A batch whose reply was lost and is written again through
// write changes nothing (its rows are there, at the same version).
func (ix *planIndex) putNew(ctx context.Context, planID string, rows []task.Row) error {
	rowsKey, countsKey := ix.s.keys.PlanRows(planID), ix.s.keys.PlanCounts(planID)
	for start := 0; start < len(rows); start += newRowsBatch {
		batch := rows[start:min(start+newRowsBatch, len(rows))]
		pairs := make([]any, 0, 2*len(batch))
		counts := map[string]int64{"total": int64(len(batch))}
		for _, r := range batch {
			pairs = append(pairs, r.ID, encodeRow(r))
			counts["s:"+string(r.Status)]++
			counts["m:"+strconv.Itoa(r.Stage)+":"+string(r.Status)]++
		}
		if _, err := ix.s.client.TxPipelined(ctx, func(tx redis.Pipeliner) error {
			tx.HSet(ctx, rowsKey, pairs...)
			for field, n := range counts {
				tx.HIncrBy(ctx, countsKey, field, n)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// encodeRow is a row as the index holds it (fence|version|status|stage|class|sinceMs|tenant|
// message), as index_tasks.lua writes it and parseRow reads it.
func encodeRow(r task.Row) string {
	return strings.Join([]string{strconv.FormatUint(r.Fence, 10), strconv.FormatUint(r.Version, 10), string(r.Status),
		strconv.Itoa(r.Stage), r.Class, strconv.FormatInt(r.Since.UnixMilli(), 10), r.TenantID, r.Message}, "|")
}
