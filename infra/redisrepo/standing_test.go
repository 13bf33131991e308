package redisrepo_test

import (
	"context"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
)

// Two executors sharing Redis, each with the plan in its memory: what one wrote of the plan's
// changing part (a ring's partial approval, a notice) is what the other reads and builds on,
// never its own stale copy written back over it.
func TestAnotherExecutorsDecisionsAndNoticesAreRead(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client()
	a := redisrepo.New(client, redisrepo.Options{})
	b := redisrepo.New(client, redisrepo.Options{})
	ctx := context.Background()
	now := time.Now().UTC()
	specs := []stage.Spec{{Name: "a", Kind: "noop"}}
	id := ulid.Make().String()
	var tasks []*task.Task
	var ids []string
	for _, tn := range []string{"sd-1", "sd-2"} {
		tk, err := task.New(id, tn, nil, specs, now)
		require.NoError(t, err)
		tasks, ids = append(tasks, tk), append(ids, tk.ID())
	}
	p, err := plan.New(plan.Draft{ID: id, Name: "shared", Stages: specs, TaskIDs: ids,
		Canary:    plan.Canary{Tenants: 1, Then: plan.ThenApprove},
		Approvers: &stage.Approvers{Count: 2},
		Notify:    []plan.Destination{{URL: "https://hooks.example/x", On: []string{plan.EventPlanPaused}}}}, now)
	require.NoError(t, err)
	require.NoError(t, a.CreatePlan(ctx, p, tasks))
	_, err = b.Plans().Plan(ctx, id) // b holds its own copy from here
	require.NoError(t, err)

	alice := stage.Decision{Approved: true, By: "alice", DecidedAt: now}
	_, err = a.Plans().Update(ctx, id, func(p *plan.Plan) error {
		if err := p.Start(now); err != nil {
			return err
		}
		return p.CountApproval(alice, now)
	})
	require.NoError(t, err)
	carol := stage.Decision{Approved: true, By: "carol", DecidedAt: now}
	_, err = b.Plans().Update(ctx, id, func(p *plan.Plan) error { return p.CountApproval(carol, now) })
	require.ErrorIs(t, err, plan.ErrEnoughApprovals, "b counts alice's approval, recorded by a")

	_, err = a.Plans().Update(ctx, id, func(p *plan.Plan) error { return p.Pause(now) })
	require.NoError(t, err)
	_, err = b.Plans().Update(ctx, id, func(p *plan.Plan) error {
		if err := p.Resume(); err != nil {
			return err
		}
		return p.Pause(now)
	})
	require.NoError(t, err)
	for name, s := range map[string]*redisrepo.Store{"a": a, "b": b} {
		got, err := s.Plans().Plan(ctx, id)
		require.NoError(t, err)
		var notices []string
		for _, n := range got.Notices() {
			notices = append(notices, n.ID)
		}
		assert.Equal(t, []string{"1-plan.paused", "2-plan.paused"}, notices, "read by %s", name)
		require.Len(t, got.Decisions(), 1, "read by %s", name)
		assert.Equal(t, "alice", got.Decisions()[0].By)
	}
}
