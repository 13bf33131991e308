package redisrepo_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/audit"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
)

// An executor alone on its Redis takes operators' actions on memory while Redis is away:
// their records are kept in memory meanwhile (listed from there), and written to Redis, in
// order and with their outcomes, before the outage ends; a shared store refuses to record
// (and so to act) without Redis.
func TestAuditRecordsOfAnOutageReachRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	store, mon := startStore(t, fastClient(t, srv.Addr()), nil)
	ctx := context.Background()
	p, tasks := newPlan(t, "au1")
	require.NoError(t, store.CreatePlan(ctx, p, tasks))
	newRecord := func(action string) *audit.Record {
		t.Helper()
		r, err := audit.New(audit.Fields{Origin: audit.Origin{Actor: "alice"}, Action: action, PlanID: p.ID(), Tenant: "au1"}, time.Now())
		require.NoError(t, err)
		return r
	}
	before := newRecord("pause")
	require.NoError(t, store.Audit().Append(ctx, before))

	srv.Freeze()
	runStage(t, store, tasks[0].ID()) // the write finds Redis away: degraded from here
	down, _ := mon.Degraded()
	require.True(t, down)
	during := newRecord("resume")
	require.NoError(t, store.Audit().Append(ctx, during), "alone: the record is kept in memory")
	require.NoError(t, during.Settle(audit.Outcome{Result: audit.Applied, At: time.Now(), Attrs: []audit.Attr{{Key: "status", Value: "RUNNING"}}}))
	require.NoError(t, store.Audit().Settle(ctx, during))
	page, err := store.Audit().List(ctx, audit.Query{PlanID: p.ID()})
	require.NoError(t, err)
	require.Len(t, page.Records, 1, "while Redis is away, what waits in memory")
	assert.Equal(t, during.ID(), page.Records[0].ID())

	srv.Thaw()
	require.Eventually(t, func() bool { d, _ := mon.Degraded(); return !d }, 10*time.Second, 20*time.Millisecond)
	fresh := redisrepo.New(srv.Client(), redisrepo.Options{})
	page, err = fresh.Audit().List(ctx, audit.Query{PlanID: p.ID()})
	require.NoError(t, err)
	require.Len(t, page.Records, 2, "another executor reads both from Redis")
	assert.Equal(t, []string{during.ID(), before.ID()}, []string{page.Records[0].ID(), page.Records[1].ID()})
	assert.Equal(t, during.Outcome(), page.Records[0].Outcome(), "written with its outcome")
}

// A shared store records in Redis or not at all: an Append that cannot reach Redis fails
// (the action is then not taken).
func TestASharedStoreRefusesToRecordWithoutRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	store := redisrepo.New(fastClient(t, srv.Addr()), redisrepo.Options{Shared: true})
	p, tasks := newPlan(t, "au2")
	require.NoError(t, store.CreatePlan(context.Background(), p, tasks))
	srv.Freeze()
	t.Cleanup(srv.Thaw)
	r, err := audit.New(audit.Fields{Origin: audit.Origin{Actor: "bob"}, Action: "cancel", PlanID: p.ID()}, time.Now())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	require.Error(t, store.Audit().Append(ctx, r))
}
