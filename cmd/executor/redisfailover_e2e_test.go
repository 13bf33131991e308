package main_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/wire"
)

// failoverTimeout bounds how long a plan may take to settle after a Redis failover (the
// failover itself, the executors' degraded spell and write-back, and the rest of the plan).
const failoverTimeout = 90 * time.Second

// rolloutThroughFailover runs a plan of 80 tenants × 4 stages on two executors sharing the
// Redis that redisURL (with extra serve flags) names, calls fail once a quarter of the
// tenants completed their first stage, and waits until no task runs or waits to run. It then
// retries from their checkpoints the tenants the failover left INTERRUPTED (or FAILED) until
// every tenant is COMPLETED, and checks what the failover may not break: no tenant was called
// twice at once, no completed stage ran again, and every stage of every tenant completed once.
//
// The lease TTL is 10 s, longer than a failover here: a run whose Redis fails over within its
// lease deadline waits for it and goes on (shared topology); one cut off longer stops at its
// deadline, is judged INTERRUPTED, and its plan PAUSED, which the operator resumes.
func rolloutThroughFailover(t *testing.T, redisURL string, extra []string, fail func()) {
	t.Helper()
	extra = append([]string{"--lease-ttl", "10s"}, extra...)
	rc := newRecorder(t)
	a := startExecutor(t, "A", redisURL, append([]string{"--name", "exec-a"}, extra...)...)
	b := startExecutor(t, "B", redisURL, append([]string{"--name", "exec-b"}, extra...)...)
	tenants := tenantsN("f", 80)
	stages := []string{"s1", "s2", "s3", "s4"}
	planFile := writePlan(t, wire.PlanRequest{
		Name: "through-failover", MaxConcurrency: 24, Stages: rc.stages(150, stages...), Tenants: tenants,
	})
	r := a.cli(t, "submit", "-f", planFile, "-o", "json")
	requireExit(t, 0, r)
	planID := decode[wire.Plan](t, r.stdout).PlanID
	require.Eventually(t, func() bool {
		n := 0
		for _, tn := range tenants {
			n += rc.answeredCount(tn.ID + "/s1")
		}
		return n >= len(tenants)/4
	}, 30*time.Second, 10*time.Millisecond, "a quarter of the tenants completed s1")
	fail()
	failedAt := time.Now()

	settled := waitSettled(t, b, planID)
	t.Logf("plan settled %s after the failover: %v", time.Since(failedAt).Round(time.Millisecond), settled.Progress)
	for round := 0; ; round++ {
		if settled.Status == "PAUSED" { // runs stopped by the failover paused it
			t.Logf("resume the plan, paused: %s", settled.Reason)
			requireExit(t, 0, b.cli(t, "plan", "resume", planID))
		}
		var retry []wire.Task
		for _, tk := range tasksOf(t, a, planID) {
			switch tk.Status {
			case "COMPLETED", "PENDING", "RUNNING": // PENDING, RUNNING: the resumed plan runs them
			case "INTERRUPTED", "FAILED":
				retry = append(retry, tk)
			default:
				require.Failf(t, "a tenant neither ended nor retryable", "%s is %s", tk.TenantID, tk.Status)
			}
		}
		if len(retry) == 0 {
			settled = waitSettled(t, a, planID)
			if settled.Status == "COMPLETED" {
				break
			}
			require.Less(t, round, 3, "plan %s still %s after %d rounds", planID, settled.Status, round)
			continue
		}
		require.Less(t, round, 3, "tenants still not COMPLETED after %d retries: %v", round, retry)
		for _, tk := range retry {
			t.Logf("retry %s (%s at stage %d)", tk.TenantID, tk.Status, tk.CurrentStage)
			requireExit(t, 0, b.cli(t, "retry", "--tenant", tk.TenantID, "--from-checkpoint"))
		}
		settled = waitSettled(t, a, planID)
	}
	assert.Empty(t, rc.overlapping(), "no tenant called twice at once")
	assert.Empty(t, rc.twice(), "no completed stage ran again")
	for _, tn := range tenants {
		for _, s := range stages {
			assert.Equal(t, 1, rc.completions(tn.ID+"/"+s), "%s/%s completed once (an in-doubt retry sends its key again)", tn.ID, s)
		}
	}
}

// waitSettled polls the plan until it is no longer RUNNING and none of its tasks is RUNNING,
// nor PENDING unless the plan is PAUSED (its queued tasks wait for the operator's resume), and
// returns it.
func waitSettled(t *testing.T, p *executorProc, planID string) wire.Plan {
	t.Helper()
	var plan wire.Plan
	require.Eventually(t, func() bool {
		r := p.cli(t, "plan", "show", planID, "-o", "json")
		if (r.code != 0 && r.code != 1) || json.Unmarshal([]byte(r.stdout), &plan) != nil {
			return false // a 503 while the executor cannot read the plan, say
		}
		if plan.Status == "RUNNING" || plan.Status == "PENDING" {
			return false
		}
		return !slices.ContainsFunc(tasksOf(t, p, planID), func(tk wire.Task) bool {
			return tk.Status == "RUNNING" || tk.Status == "PENDING" && plan.Status != "PAUSED"
		})
	}, failoverTimeout, 200*time.Millisecond, "plan %s did not settle", planID)
	return plan
}

// A Redis Cluster master fails over in the middle of a rollout, coordinated (CLUSTER
// FAILOVER on its replica) or because it was killed (kill -9; its replica is promoted after
// the cluster's node timeout): the executors follow the new master.
func TestRedisClusterMasterFailoverMidRollout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fail func(t *testing.T, c *redistest.Cluster)
	}{
		{name: "cluster failover", fail: func(t *testing.T, c *redistest.Cluster) {
			c.Failover(c.MasterOf("executor:events"))
		}},
		{name: "master killed", fail: func(t *testing.T, c *redistest.Cluster) {
			m := c.MasterOf("executor:events")
			m.Kill()
			c.WaitHealthy()
			assert.NotEqual(t, m.Addr(), c.MasterOf("executor:events").Addr(), "a replica took over")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := redistest.StartCluster(t, 3, 1)
			rolloutThroughFailover(t, c.URL(), nil, func() { tt.fail(t, c) })
		})
	}
}

// SENTINEL FAILOVER in the middle of a rollout. The old master keeps taking writes until the
// sentinels make it a replica of the new one, which discards them: on a default master the
// executors notice the switch when their client dials the new master, and write back what they
// hold (a new generation: every executor does); on a master with min-replicas-to-write as many
// as its replicas, the old master refuses those writes and the executors run degraded meanwhile.
func TestSentinelFailoverMidRollout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		replicas int
		opts     []redistest.Option
	}{
		{name: "default master, two replicas", replicas: 2},
		{name: "min-replicas-to-write", replicas: 1, opts: []redistest.Option{redistest.Args("--min-replicas-to-write", "1", "--min-replicas-max-lag", "10")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := redistest.StartSentinels(t, tt.replicas, 3, tt.opts...)
			rolloutThroughFailover(t, s.URL(), nil, func() { s.Failover() })
		})
	}
}

// The master Sentinel watches is killed (kill -9) in the middle of a rollout; the sentinels
// promote one of its two replicas after 1 s: the executors follow the new master.
func TestSentinelMasterKilledMidRollout(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinels(t, 2, 3)
	rolloutThroughFailover(t, s.URL(), nil, func() {
		m := s.Master()
		m.Kill()
		s.WaitNewMaster(m.Addr())
	})
}
