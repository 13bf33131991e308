package redisrepo_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// A run whose tenant lease disappears (taken over, or Redis lost it) is cancelled mid-stage
// and its task ends INTERRUPTED with class lease_lost, its checkpoint intact.
func TestLosingTheLeaseInterruptsTheRun(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := srv.Client()
	keys := rediskey.New("")
	const ttl = 600 * time.Millisecond
	kinds := stagekind.Builtin(stagekind.HTTPOptions{})
	stopped := make(chan error, 1)
	require.NoError(t, kinds.Register("hang", stage.HandlerFunc(func(ctx context.Context, _ stage.Request) (json.RawMessage, error) {
		<-ctx.Done()
		stopped <- ctx.Err()
		return nil, ctx.Err()
	})))
	svc, _ := apptest.New(t, onRedis(client, ttl), kinds, orchestrator.Config{LeaseTTL: ttl})
	ctx := context.Background()
	_, err := svc.Submit(ctx, app.SubmitRequest{
		Stages:  []stage.Spec{{Name: "one", Kind: "noop"}, {Name: "two", Kind: "hang"}},
		Tenants: []app.TenantInput{{ID: "ll-1"}},
	})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		v, err := svc.TenantTask(ctx, "ll-1")
		return err == nil && v.Task.Status() == task.Running && v.Task.CurrentStage() == 1 && v.Lease.Held
	}, 10*time.Second, 5*time.Millisecond)

	require.NoError(t, client.Del(ctx, keys.TenantLock("ll-1")).Err()) // the lease is gone
	select {
	case err := <-stopped:
		require.ErrorIs(t, err, context.Canceled, "the stage's context was cancelled")
	case <-time.After(5 * ttl):
		t.Fatal("the run went on without its lease")
	}
	require.Eventually(t, func() bool {
		v, err := svc.TenantTask(ctx, "ll-1")
		return err == nil && v.Task.Status() == task.Interrupted
	}, 10*time.Second, 5*time.Millisecond)
	v, err := svc.TenantTask(ctx, "ll-1")
	require.NoError(t, err)
	require.NotNil(t, v.Task.LastError())
	assert.Equal(t, stage.ClassLeaseLost, v.Task.LastError().Class)
	require.NotNil(t, v.Checkpoint)
	assert.Equal(t, []string{"one"}, v.Checkpoint.CompletedStages())
}
