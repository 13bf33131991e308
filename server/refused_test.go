package server_test

// Redis refusing the executor (docs/redis.md, "What the executor needs from Redis"): no or a
// wrong password, an ACL user without a channel, a command or the keys it needs, a command
// renamed away. The executor is not ready while Redis refuses it: GET /readyz and every
// request answer 503 naming what is refused (never 200, never 500), and it becomes ready once
// Redis grants it, without a restart.

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// rfACL is the ACL rule docs/redis.md gives an executor's user (prefix "executor:", Redis
// 7.0: no CLIENT SETINFO).
const rfACL = "resetkeys ~executor:* resetchannels &executor:* -@all " +
	"+ping +time +select +info +client|id +client|unblock " +
	"+multi +exec +discard +eval +evalsha +script|load +script|exists " +
	"+get +set +getdel +getrange +del +exists +expire +pexpire +persist +pttl " +
	"+hget +hgetall +hmget +hset +hdel +hincrby +hlen +hexists " +
	"+zadd +zcard +zrange +zrevrange +zrevrank +zrangebyscore +zrevrangebyscore +zrem +zscore +zpopmin " +
	"+sadd +srem +smembers +srandmember +xadd +xlen +xdel +xread +xrange +xrevrange +publish +subscribe +unsubscribe"

// rfSetUser gives the ACL user "executor" (password pw) rule, on top of what it had.
func rfSetUser(t *testing.T, rs *redistest.Server, rule string) {
	t.Helper()
	args := []any{"ACL", "SETUSER", "executor", "on", ">pw"}
	for _, f := range strings.Fields(rule) {
		args = append(args, f)
	}
	require.NoError(t, rs.Client().Do(context.Background(), args...).Err())
}

// rfUserURL is the URL of rs as the ACL user "executor".
func rfUserURL(rs *redistest.Server) string { return "redis://executor:pw@" + rs.Addr() + "/0" }

// rfStart starts an executor on url, logging into logs.
func rfStart(t *testing.T, url string, logs *servertest.Buffer) (*server.Server, *dgClient, *dgBake) {
	t.Helper()
	rec := newDGBake()
	srv := servertest.With(t, server.Config{RedisURL: url, LeaseTTL: 2 * time.Second,
		Logger: slog.New(slog.NewJSONHandler(logs, nil))}, rec.register)
	return srv, newDGClient(t, srv), rec
}

// rfRequireRefused requires the executor not ready, naming says in /readyz, in the problem of
// a submission and in the problem of a query, all 503 unavailable.
func rfRequireRefused(t *testing.T, c *dgClient, says ...string) {
	t.Helper()
	var h wire.Health
	resp := c.do(http.MethodGet, "/readyz", nil, &h)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "/readyz: %+v", h)
	assert.Equal(t, "unavailable", h.Status)
	for _, s := range says {
		assert.Contains(t, h.Reason, s, "/readyz")
	}
	for _, r := range []struct {
		method, path string
		body         any
	}{
		{http.MethodPost, "/v1/plans", newDGPlan("refused", 2, []int{10}, 0).request()},
		{http.MethodGet, "/v1/plans", nil},
	} {
		var prob wire.Problem
		resp := c.do(r.method, r.path, r.body, &prob)
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s %s: %+v", r.method, r.path, prob)
		assert.Equal(t, wire.ProblemContentType, resp.Header.Get("Content-Type"), r.path)
		assert.Equal(t, wire.ProblemUnavailable, prob.Type, r.path)
		for _, s := range says {
			assert.Contains(t, prob.Detail, s, "%s %s", r.method, r.path)
		}
	}
}

// Each way Redis refuses the executor at start: not ready, 503 naming the cause.
func TestRedisRefusingTheExecutorAtStartIsNamed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		start func(t *testing.T) string // starts the Redis, returns the executor's --redis
		says  []string
	}{
		{"no password", func(t *testing.T) string {
			rs := redistest.Start(t)
			require.NoError(t, rs.Client().ConfigSet(context.Background(), "requirepass", "s3cret").Err())
			return rs.URL()
		}, []string{"NOAUTH", "asks for a password"}},
		{"wrong password", func(t *testing.T) string {
			rs := redistest.Start(t)
			require.NoError(t, rs.Client().ConfigSet(context.Background(), "requirepass", "s3cret").Err())
			return "redis://:wrong@" + rs.Addr() + "/0"
		}, []string{"WRONGPASS"}},
		{"no EVAL", func(t *testing.T) string {
			rs := redistest.Start(t)
			rfSetUser(t, rs, rfACL+" -eval")
			return rfUserURL(rs)
		}, []string{"cannot run EVAL", "grant it +eval"}},
		{"other keys", func(t *testing.T) string {
			rs := redistest.Start(t)
			rfSetUser(t, rs, strings.Replace(rfACL, "~executor:*", "~other:*", 1))
			return rfUserURL(rs)
		}, []string{"NOPERM", "grant it ~executor:*"}},
		{"TIME renamed away", func(t *testing.T) string {
			return redistest.Start(t, redistest.Config("rename-command TIME \"\"\n")).URL()
		}, []string{"does not know the command TIME"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			logs := &servertest.Buffer{}
			_, c, _ := rfStart(t, tc.start(t), logs)
			rfRequireRefused(t, c, tc.says...)
			assert.Contains(t, logs.String(), "redis refuses what this executor needs")
		})
	}
}

// An ACL user without the executor's channels (no &executor:*): its plans' tasks would be
// queued where the other executors are never told of them. Not ready, naming the channel,
// until the channels are granted; then ready without a restart, and a plan runs.
func TestRedisACLWithoutChannelsIsNotReadyUntilGranted(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	rfSetUser(t, rs, strings.Replace(rfACL, "&executor:*", "", 1))
	logs := &servertest.Buffer{}
	_, c, rec := rfStart(t, rfUserURL(rs), logs)
	says := []string{"cannot PUBLISH on channel executor:signals", "NOPERM", "grant it &executor:*"}
	rfRequireRefused(t, c, says...)

	rfSetUser(t, rs, "&executor:*")
	c.waitRedis("ok")
	assert.Contains(t, logs.String(), "redis grants what this executor needs again")
	var list wire.PlanList
	require.Equal(t, http.StatusOK, c.do(http.MethodGet, "/v1/plans", nil, &list).StatusCode)
	assert.Empty(t, list.Plans, "a refused plan was created")
	p := newDGPlan("granted", 2, []int{10}, 0)
	c.waitCompleted(c.submit(p).PlanID)
	rec.requireEachRanOnce(t, p.tenants, p.stages)
}

// The ACL rule docs/redis.md gives is enough: a plan runs to its end, and Redis refused
// nothing (its ACL LOG is empty). Revoking the channels while the executor runs makes it not
// ready (GET /readyz checks again), naming them; granting them back makes it ready again.
func TestRedisDocumentedACLRunsAndARevocationIsNamed(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	ctx := context.Background()
	rfSetUser(t, rs, rfACL)
	logs := &servertest.Buffer{}
	_, c, rec := rfStart(t, rfUserURL(rs), logs)
	c.waitRedis("ok")
	p := newDGPlan("documented", 3, []int{10, 10}, 0)
	submitted := c.submit(p)
	c.waitCompleted(submitted.PlanID)
	rec.requireEachRanOnce(t, p.tenants, p.stages)
	var tasks wire.TaskList
	require.Equal(t, http.StatusOK, c.do(http.MethodGet, "/v1/plans/"+submitted.PlanID+"/tasks", nil, &tasks).StatusCode)
	denials, err := rs.Client().Do(ctx, "ACL", "LOG").Slice()
	require.NoError(t, err)
	for _, d := range denials { // but the access check's one question: may it run ACL DRYRUN?
		entry, ok := d.(map[any]any)
		require.True(t, ok, "an ACL LOG entry: %v", d)
		assert.Equal(t, "acl|whoami", entry["object"], "Redis refused the documented ACL user something: %v", entry)
		assert.EqualValues(t, 1, entry["count"], "the access check asked ACL WHOAMI more than once: %v", entry)
	}

	require.NoError(t, rs.Client().Do(ctx, "ACL", "SETUSER", "executor", "resetchannels").Err())
	dgPoll(t, dgReady, func() bool {
		var h wire.Health
		resp := c.do(http.MethodGet, "/readyz", nil, &h)
		return resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(h.Reason, "on channel executor:")
	}, "/readyz never named the revoked channels")
	rfRequireRefused(t, c, "on channel executor:", "grant it &executor:*")

	rfSetUser(t, rs, "&executor:*")
	c.waitRedis("ok")
	c.waitCompleted(c.submit(newDGPlan("regranted", 1, []int{10}, 0)).PlanID)
}
