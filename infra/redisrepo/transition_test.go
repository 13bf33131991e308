package redisrepo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/infra/roundtrips"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// An executor on Redis, whose Redis round trips are counted.
type counted struct {
	svc   *app.Service
	trips *roundtrips.Counter
}

func newCounted(t *testing.T, srv *redistest.Server, register func(*stagekind.Registry)) counted {
	t.Helper()
	client, trips := srv.CountingClient()
	kinds := stagekind.Builtin(stagekind.HTTPOptions{})
	register(kinds)
	// A deferred index row waits longer than the test: the round trips counted are the runs'.
	svc, _ := apptest.New(t, onRedisWith(client, lock.DefaultRedisTTL, redisrepo.Options{IndexDelay: time.Hour}), kinds, orchestrator.Config{})
	return counted{svc: svc, trips: trips}
}

// onRedis is the Redis backend on client, under the default prefix, with leases of leaseTTL.
func onRedis(client redis.UniversalClient, leaseTTL time.Duration) apptest.Stores {
	return onRedisWith(client, leaseTTL, redisrepo.Options{})
}

// onRedisWith is onRedis with the store's options opts (their Keys are the default prefix's).
func onRedisWith(client redis.UniversalClient, leaseTTL time.Duration, opts redisrepo.Options) apptest.Stores {
	keys := rediskey.New("")
	opts.Keys = keys
	store := redisrepo.New(client, opts)
	return apptest.Stores{
		Creator: store, Plans: store.Plans(), Tasks: store.Tasks(), Checkpoints: store.Checkpoints(),
		Locker: lock.NewRedis(client, lock.RedisOptions{Keys: keys, TTL: leaseTTL}),
	}
}

// Between the end of one stage and the start of the next, a run makes exactly one Redis round
// trip: the fenced write of the task, its ledger entry and its checkpoint. Its row in its
// plan's index (in the plan's slot, so a step of its own on a Redis Cluster) is deferred: the
// rows of every run go in one call per plan within 20 ms. (Nothing else may use
// the counted client meanwhile: stage 0 waits until Submit has returned, and the test waits for
// the last stage before it reads the plan.)
func TestOneRoundTripPerStageTransition(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	const n = 8
	var mu sync.Mutex
	var at []int64 // round trips counted as each stage starts
	submitted, finished := make(chan struct{}), make(chan struct{})
	var exe counted
	exe = newCounted(t, srv, func(k *stagekind.Registry) {
		require.NoError(t, k.Register("probe", stage.HandlerFunc(func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
			if req.StageIndex == 0 {
				<-submitted
			}
			mu.Lock()
			at = append(at, exe.trips.Count())
			mu.Unlock()
			if req.StageIndex == n-1 {
				close(finished)
			}
			return json.RawMessage(`{"stage":"` + req.Stage + `"}`), nil
		})))
	})
	specs := make([]stage.Spec, n)
	for i := range specs {
		specs[i] = stage.Spec{Name: fmt.Sprintf("s%d", i), Kind: "probe"}
	}
	ctx := context.Background()
	sub, err := exe.svc.Submit(ctx, app.SubmitRequest{Stages: specs, Tenants: []app.TenantInput{{ID: "rt-1"}}})
	require.NoError(t, err)
	close(submitted)
	select {
	case <-finished:
	case <-time.After(20 * time.Second):
		t.Fatal("the plan did not run")
	}
	v, err := exe.svc.WaitPlan(ctx, sub.Plan.Plan.ID(), 20*time.Second)
	require.NoError(t, err)
	require.Equal(t, plan.Completed, v.Plan.Status())

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, at, n)
	for i := 1; i < n; i++ {
		assert.EqualValues(t, 1, at[i]-at[i-1], "round trips between stage %d and stage %d", i-1, i)
	}
}
