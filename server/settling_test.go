package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// After Redis restarts empty, the executors write back what they hold, each once it notices,
// within one lease TTL (the claims' wait). Meanwhile a command on a task another executor
// runs would act on whatever copy was written back first, maybe a stale one that a newer
// copy then replaces, and the acknowledged command with it (chaos seed 333: a cancel answered
// 200, then the task COMPLETED). So such a command answers 503 with Retry-After, naming why,
// until the wait is over; then it is applied, and stays.
func TestCommandsWaitWhileExecutorsWriteBackAfterAnEmptyRestart(t *testing.T) {
	t.Parallel()
	const leaseTTL = 3 * time.Second
	rs := redistest.Start(t)
	rec := newOverlap()
	cfg := server.Config{RedisURL: rs.URL(), LeaseTTL: leaseTTL, Logger: dgLogger()}
	a := newDGClient(t, servertest.With(t, server.Config{RedisURL: rs.URL(), LeaseTTL: leaseTTL, Logger: dgLogger(), Name: "settle-a"}, rec.register))
	b := newDGClient(t, servertest.With(t, server.Config{RedisURL: cfg.RedisURL, LeaseTTL: leaseTTL, Logger: dgLogger(), Name: "settle-b"}, rec.register))

	const tenant = "settle-1"
	var p wire.Plan
	resp := a.do(http.MethodPost, "/v1/plans", holdPlan("settle", []string{tenant}, 1, 60_000), &p)
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	dgPoll(t, dgWait, func() bool { return a.tenantTask(tenant).Status == "RUNNING" }, "the tenant never ran")
	runner, other := a, b // the command goes to the executor that does not run the task
	if a.tenantTask(tenant).Executor == "settle-b" {
		runner, other = b, a
	}

	rs.Kill()
	rs.Restart()
	restarted := time.Now()

	statuses := map[int]int{}
	var accepted time.Time
	for time.Since(restarted) < 4*leaseTTL {
		var body json.RawMessage
		resp := other.do(http.MethodPost, "/v1/tenants/"+tenant+"/cancel", nil, &body)
		statuses[resp.StatusCode]++
		if resp.StatusCode == http.StatusOK {
			accepted = time.Now()
			break
		}
		var problem wire.Problem
		require.NoError(t, json.Unmarshal(body, &problem))
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s: %s", problem.Title, problem.Detail)
		require.Regexp(t, "unreachable|lease TTL|lost (its )?data|write back", problem.Detail, "the 503 says why")
		if resp.Header.Get("Retry-After") == "" {
			t.Errorf("a 503 without Retry-After: %s", problem.Detail)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("cancel answers after the empty restart: %v; accepted %v after it", statuses, accepted.Sub(restarted).Round(time.Millisecond))
	require.False(t, accepted.IsZero(), "the cancel was never accepted: %v", statuses)
	// The wait runs one lease TTL from the first executor's notice of the loss, after the
	// restart: nothing was acknowledged before (a small margin for the clocks of the test and
	// of Redis's TIME).
	assert.GreaterOrEqual(t, accepted.Sub(restarted), leaseTTL-250*time.Millisecond, "a command acknowledged while the executors wrote back")

	time.Sleep(leaseTTL) // anything written back late would have replaced it by now
	for _, c := range []*dgClient{runner, other} {
		assert.Equal(t, "CANCELLED", c.tenantTask(tenant).Status, "the acknowledged cancel stays")
	}
}
