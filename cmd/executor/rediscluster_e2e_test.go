package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/wire"
)

// eventLog collects the data lines of a GET /v1/events stream, read in the background until
// the test ends.
type eventLog struct {
	mu    sync.Mutex
	lines []string
}

func followEvents(t *testing.T, url string) *eventLog {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	l := &eventLog{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				l.mu.Lock()
				l.lines = append(l.lines, strings.TrimSpace(data))
				l.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { cancel(); resp.Body.Close(); <-done })
	return l
}

// planEnded reports whether the log holds a plan event of planID with status.
func (l *eventLog) planEnded(planID, status string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		var e struct{ Kind, PlanID, Status string }
		if json.Unmarshal([]byte(line), &e) == nil && e.Kind == "plan" && e.PlanID == planID && e.Status == status {
			return true
		}
	}
	return false
}

// keysPerMaster counts the executor's keys (prefix executor:) on every master.
func keysPerMaster(t *testing.T, c *redistest.Cluster) map[string]int {
	t.Helper()
	out := map[string]int{}
	ctx := context.Background()
	for _, m := range c.Masters() {
		cl := redis.NewClient(&redis.Options{Addr: m.Addr()})
		n := 0
		iter := cl.Scan(ctx, 0, "executor:*", 1000).Iterator()
		for iter.Next(ctx) {
			n++
		}
		require.NoError(t, iter.Err())
		require.NoError(t, cl.Close())
		out[m.Addr()] = n
	}
	return out
}

// On a Redis Cluster of 3 masters with a replica each, two executors (one given go-redis's
// cluster URL, one a seed node and --redis-cluster) run a 200-tenant plan to COMPLETED, with
// tenant queries, a retry from a checkpoint, pause, resume and cancel, a scheduled plan and
// the event stream working across them, and the keys spread over every master.
func TestRedisClusterRunsEveryCommand(t *testing.T) {
	t.Parallel()
	cluster := redistest.StartCluster(t, 3, 1)
	a := startExecutor(t, "A", cluster.URL(), "--name", "exec-a")
	b := startExecutor(t, "B", cluster.SeedURL(), "--redis-cluster", "--name", "exec-b")
	events := followEvents(t, b.URL()+"/v1/events")

	rc := newRecorder(t)
	planFile := writePlan(t, wire.PlanRequest{
		Name: "cluster-200", MaxConcurrency: 40, Stages: rc.stages(5, "s1", "s2", "s3"), Tenants: tenantsN("c", 200),
	})
	r := a.cli(t, "submit", "-f", planFile, "-o", "json")
	requireExit(t, 0, r)
	big := decode[wire.Plan](t, r.stdout)
	end := watchPlan(t, b, big.PlanID)
	require.Equal(t, "COMPLETED", end.Status)
	byExecutor := map[string]int{}
	for _, tk := range tasksOf(t, b, big.PlanID) {
		assert.Equal(t, "COMPLETED", tk.Status, tk.TenantID)
		byExecutor[tk.Executor]++
	}
	t.Logf("tasks by executor: %v", byExecutor)
	assert.Empty(t, rc.twice(), "no (tenant, stage) ran twice")
	for _, tn := range tenantsN("c", 200) {
		require.Equal(t, 1, rc.answeredCount(tn.ID+"/s3"), tn.ID)
	}
	require.Eventually(t, func() bool { return events.planEnded(big.PlanID, "COMPLETED") }, 10*time.Second, 50*time.Millisecond,
		"B's event stream shows the plan A accepted completing")

	// A tenant query on either executor reads the cluster.
	r = a.cli(t, "status", "--tenant", "c-123", "-o", "json")
	requireExit(t, 0, r)
	q := decode[wire.Task](t, r.stdout)
	assert.Equal(t, "COMPLETED", q.Status)
	require.NotNil(t, q.Checkpoint)
	assert.Equal(t, 2, q.Checkpoint.LastCompletedStageIndex)

	spread := keysPerMaster(t, cluster)
	t.Logf("executor keys per master: %v", spread)
	require.Len(t, spread, 3)
	for addr, n := range spread {
		assert.Greater(t, n, 100, "master %s holds a share of the plan's keys", addr)
	}

	t.Run("retry from checkpoint", func(t *testing.T) {
		tg, srv := newTarget(t)
		stages := httpStages(srv.URL, "5s", "s1", "s2", "s3", "s4")
		file := writePlan(t, wire.PlanRequest{Name: "cluster-retry", Stages: stages,
			Tenants: []wire.TenantRequest{{ID: "t1"}, {ID: "t2"}, {ID: "t3"}}})
		r := b.cli(t, "submit", "-f", file, "--wait", "-o", "json")
		requireExit(t, 1, r)
		failed := decode[wire.Plan](t, r.stdout)
		assert.Equal(t, "FAILED", failed.Status)
		tg.fixed.Store(true)
		requireExit(t, 0, a.cli(t, "retry", "--tenant", "t2", "--from-checkpoint"))
		assert.Equal(t, "COMPLETED", watchPlan(t, a, failed.PlanID).Status)
		assertT2ResumedAtS3(t, tg)
	})

	t.Run("pause resume cancel", func(t *testing.T) {
		slow := newRecorder(t)
		file := writePlan(t, wire.PlanRequest{Name: "cluster-steer", MaxConcurrency: 2,
			Stages: slow.stages(150, "s1", "s2"), Tenants: tenantsN("p", 30)})
		r := a.cli(t, "submit", "-f", file, "-o", "json")
		requireExit(t, 0, r)
		p := decode[wire.Plan](t, r.stdout)
		require.Eventually(t, func() bool { return slow.answeredCount("p-000/s1") == 1 }, 10*time.Second, 10*time.Millisecond)
		requireExit(t, 0, b.cli(t, "plan", "pause", p.PlanID))
		waitPlanStatus(t, a, p.PlanID, "PAUSED")
		requireExit(t, 0, b.cli(t, "plan", "resume", p.PlanID))
		waitPlanStatus(t, a, p.PlanID, "RUNNING")
		requireExit(t, 0, a.cli(t, "plan", "cancel", p.PlanID))
		r = b.cli(t, "plan", "show", p.PlanID, "--watch", "-o", "json")
		requireExit(t, 1, r) // a plan that did not complete
		ended := decode[wire.Plan](t, r.stdout)
		assert.Equal(t, "CANCELLED", ended.Status)
		assert.Positive(t, ended.Progress["CANCELLED"], "queued tenants are cancelled")
		assert.Less(t, ended.Progress["COMPLETED"], 30, "the cancel stopped the rollout")
		assert.Empty(t, slow.twice())
	})

	t.Run("scheduled plan", func(t *testing.T) {
		sched := newRecorder(t)
		at := time.Now().Add(2 * time.Second).UTC()
		file := writePlan(t, wire.PlanRequest{Name: "cluster-scheduled", StartAt: &at,
			Stages: sched.stages(1, "s1"), Tenants: tenantsN("s", 5)})
		r := b.cli(t, "submit", "-f", file, "-o", "json")
		requireExit(t, 0, r)
		p := decode[wire.Plan](t, r.stdout)
		assert.Equal(t, "SCHEDULED", p.Status)
		ended := watchPlan(t, a, p.PlanID)
		assert.Equal(t, "COMPLETED", ended.Status)
		require.NotNil(t, ended.StartedAt)
		assert.False(t, ended.StartedAt.Before(at), "started at its startAt, not before")
	})
}

// waitPlanStatus polls plan show until the plan reads status.
func waitPlanStatus(t *testing.T, p *executorProc, planID, status string) {
	t.Helper()
	require.Eventually(t, func() bool {
		r := p.cli(t, "plan", "show", planID, "-o", "json")
		return r.code == 0 && decode[wire.Plan](t, r.stdout).Status == status
	}, 30*time.Second, 50*time.Millisecond, "plan %s never read %s", planID, status)
}
