package redisrepo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// heldAtThird runs a one-tenant plan of five "hold" stages on a store with the given index
// delay; the run holds in its third stage (index 2) until the returned release is called.
func heldAtThird(t *testing.T, client redis.UniversalClient, delay time.Duration) (svc *app.Service, planID, taskID string, release func()) {
	t.Helper()
	reached, gate := make(chan struct{}), make(chan struct{})
	kinds := stagekind.Builtin(stagekind.HTTPOptions{})
	require.NoError(t, kinds.Register("hold", stage.HandlerFunc(func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		if req.StageIndex == 2 {
			close(reached)
			<-gate
		}
		return nil, nil
	})))
	svc, _ = apptest.New(t, onRedisWith(client, lock.DefaultRedisTTL, redisrepo.Options{IndexDelay: delay}), kinds, orchestrator.Config{})
	specs := make([]stage.Spec, 5)
	for i := range specs {
		specs[i] = stage.Spec{Name: fmt.Sprintf("s%d", i), Kind: "hold"}
	}
	sub, err := svc.Submit(context.Background(), app.SubmitRequest{Stages: specs, Tenants: []app.TenantInput{{ID: "di-1"}}})
	require.NoError(t, err)
	released := false
	release = func() {
		if !released {
			released = true
			close(gate)
		}
	}
	t.Cleanup(release)
	select {
	case <-reached:
	case <-time.After(20 * time.Second):
		t.Fatal("the run did not reach its third stage")
	}
	return svc, sub.Plan.Plan.ID(), sub.Plan.Plan.TaskIDs()[0], release
}

// rowStage returns the stage and status of the task's row in the plan's index, as Redis holds it.
func rowStage(t *testing.T, client redis.UniversalClient, planID, taskID string) (stage, status string) {
	t.Helper()
	v, err := client.HGet(context.Background(), rediskey.New("").PlanRows(planID), taskID).Result()
	require.NoError(t, err)
	parts := strings.Split(v, "|")
	require.GreaterOrEqual(t, len(parts), 4, v)
	return parts[3], parts[2]
}

// A RUNNING task's row at its next stage waits (here: longer than the test) while its start
// row is written at once; a read of the index by the same executor writes what waits first,
// so it reports the stage the run is at; the plan's end is written after the rows of its
// tasks' ends.
func TestDeferredIndexRowsAreWrittenBeforeTheExecutorReadsItsIndex(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := srv.Client()
	svc, planID, taskID, release := heldAtThird(t, client, time.Hour)

	st, status := rowStage(t, client, planID, taskID)
	assert.Equal(t, string(task.Running), status, "the start row is written with the start")
	assert.Equal(t, "0", st, "the rows of stages 1 and 2 wait")

	sum, err := svc.Summary(context.Background(), planID)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Summary.Stages[2][task.Running], "the summary counts the task at its third stage: %v", sum.Summary.Stages)
	st, _ = rowStage(t, client, planID, taskID)
	assert.Equal(t, "2", st, "the read wrote the waiting row to Redis")

	// The task's end waits too; the plan's end is written after what waits.
	release()
	v, err := svc.WaitPlan(context.Background(), planID, 20*time.Second)
	require.NoError(t, err)
	require.Equal(t, plan.Completed, v.Plan.Status())
	st, status = rowStage(t, client, planID, taskID)
	assert.Equal(t, string(task.Completed), status)
	assert.Equal(t, "5", st)
}

// Without any read, a waiting row reaches Redis by itself within the delay: another
// executor's reader sees the stage the run is at.
func TestDeferredIndexRowsReachRedisWithoutARead(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := srv.Client()
	_, planID, taskID, _ := heldAtThird(t, client, 5*time.Millisecond)
	require.Eventually(t, func() bool {
		st, _ := rowStage(t, client, planID, taskID)
		return st == "2"
	}, 20*time.Second, 5*time.Millisecond)
}
