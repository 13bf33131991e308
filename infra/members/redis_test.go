package members_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/members"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
)

func TestMembersRedisRegistersAndLists(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Start(t).Client()
	var runs atomic.Int64
	runs.Store(3)
	before := time.Now().UTC()
	b := startRedis(t, client, "exec-b", members.Options{Address: "10.0.0.2:8080", Version: "v1.2.3",
		Runs: func() int { return int(runs.Load()) }})
	a := startRedis(t, client, "exec-a", members.Options{Address: "10.0.0.1:8080"})
	assert.Equal(t, "exec-a", a.Name())

	for _, r := range []*members.Redis{a, b} {
		list, err := r.List(ctx)
		require.NoError(t, err)
		assertNames(t, []string{"exec-a", "exec-b"}, list)
		got := list[1]
		assert.Equal(t, "10.0.0.2:8080", got.Address)
		assert.Equal(t, "v1.2.3", got.Version)
		assert.True(t, got.Alive)
		assert.Equal(t, 3, got.Runs)
		assert.False(t, got.StartedAt.Before(before.Truncate(time.Microsecond)), "startedAt %s", got.StartedAt)
		assert.False(t, got.LastHeartbeat.Before(got.StartedAt))
	}

	alive, err := a.Alive(ctx, "exec-b")
	require.NoError(t, err)
	assert.True(t, alive)
	alive, err = a.Alive(ctx, "nobody")
	require.NoError(t, err)
	assert.False(t, alive)

	// The keys are the documented ones, with a TTL of at most the TTL.
	keys := rediskey.New("")
	pttl, err := client.PTTL(ctx, keys.Executor("exec-a")).Result()
	require.NoError(t, err)
	assert.Greater(t, pttl, time.Duration(0))
	assert.LessOrEqual(t, pttl, ttl)
	var reg map[string]any
	raw, err := client.HGet(ctx, keys.Executors(), "exec-a").Result()
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(raw), &reg))
	assert.Equal(t, "exec-a", reg["name"])
	assert.Equal(t, "10.0.0.1:8080", reg["address"])

	// The refresh keeps both alive for many TTLs, and reports the runs as they change.
	runs.Store(7)
	require.Eventually(t, func() bool { return byName(t, a)["exec-b"].Runs == 7 }, waitFor, tick)
	require.Never(t, func() bool {
		m := byName(t, a)
		return !m["exec-a"].Alive || !m["exec-b"].Alive
	}, 3*ttl, 50*time.Millisecond, "a refreshed executor stays alive")
}

func TestMembersRedisLivenessExpiresAfterACrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Start(t).Client()
	a := startRedis(t, client, "exec-a", members.Options{})
	b := startRedis(t, client, "exec-b", members.Options{})
	requireAlive(t, a, "exec-b", true)

	members.Crash(b) // like kill -9: no clean-up, no more refreshes
	requireAlive(t, a, "exec-b", false)
	alive, err := a.Alive(ctx, "exec-b")
	require.NoError(t, err)
	assert.False(t, alive)
	dead := byName(t, a)["exec-b"]
	assert.False(t, dead.LastHeartbeat.IsZero(), "a dead executor shows when it was last seen")
	assert.True(t, byName(t, a)["exec-a"].Alive)
	require.NoError(t, b.Stop(ctx), "Stop after a crash does nothing")
	requireAlive(t, a, "exec-b", false)
}

func TestMembersRedisOneLiveExecutorPerName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Start(t).Client()
	tests := []struct {
		name string
		end  func(t *testing.T, first *members.Redis) // ends the first executor
	}{
		{"after a clean stop the name is free at once", func(t *testing.T, first *members.Redis) {
			t.Helper()
			require.NoError(t, first.Stop(ctx))
		}},
		{"after a crash the name is free once its key expired", func(t *testing.T, first *members.Redis) {
			t.Helper()
			members.Crash(first)
		}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			name := []string{"clean", "crash"}[i]
			first := startRedis(t, client, name, members.Options{})
			second := newRedis(t, client, name, members.Options{})
			err := second.Start(ctx)
			require.ErrorIs(t, err, members.ErrNameInUse)
			assert.Contains(t, err.Error(), name)
			require.Never(t, func() bool { return !byName(t, first)[name].Alive }, ttl, 50*time.Millisecond,
				"the refused start leaves the first one alone")

			tc.end(t, first)
			require.Eventually(t, func() bool {
				again := newRedis(t, client, name, members.Options{Address: "10.9.9.9:1"})
				return again.Start(ctx) == nil
			}, waitFor, 50*time.Millisecond)
			m := byName(t, first)[name]
			assert.True(t, m.Alive)
			assert.Equal(t, "10.9.9.9:1", m.Address, "the new executor's entry")
		})
	}
}

func TestMembersRedisStopRemovesTheExecutor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Start(t).Client()
	a := startRedis(t, client, "exec-a", members.Options{})
	b := startRedis(t, client, "exec-b", members.Options{})
	require.NoError(t, b.Stop(ctx))
	require.NoError(t, b.Stop(ctx), "idempotent")

	list, err := a.List(ctx)
	require.NoError(t, err)
	assertNames(t, []string{"exec-a"}, list)
	keys := rediskey.New("")
	n, err := client.Exists(ctx, keys.Executor("exec-b")).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "liveness key deleted")
	has, err := client.HExists(ctx, keys.Executors(), "exec-b").Result()
	require.NoError(t, err)
	assert.False(t, has, "entry deleted")
}

// A process frozen past its TTL whose name another executor took meanwhile neither refreshes
// nor deletes the other's key.
func TestMembersRedisNeverTouchesAnotherProcessKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Start(t).Client()
	var out logs
	old := startRedis(t, client, "shared", members.Options{Address: "old:1", Logger: out.logger()})
	keys := rediskey.New("")
	require.NoError(t, client.Del(ctx, keys.Executor("shared")).Err(), "as if its key had expired")
	taker := startRedis(t, client, "shared", members.Options{Address: "new:1"})
	value, err := client.Get(ctx, keys.Executor("shared")).Result()
	require.NoError(t, err)

	require.Eventually(t, func() bool { return out.count("another executor holds this executor's name") == 1 },
		waitFor, tick, "the old process notices")
	require.NoError(t, old.Stop(ctx))
	m := byName(t, taker)["shared"]
	assert.True(t, m.Alive)
	assert.Equal(t, "new:1", m.Address)
	got, err := client.Get(ctx, keys.Executor("shared")).Result()
	require.NoError(t, err)
	var hb struct{ Instance string }
	var was struct{ Instance string }
	require.NoError(t, json.Unmarshal([]byte(got), &hb))
	require.NoError(t, json.Unmarshal([]byte(value), &was))
	assert.Equal(t, was.Instance, hb.Instance, "still the taker's key")
}

func TestMembersRedisPrunesLongDeadEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Start(t).Client()
	keys := rediskey.New("p:")
	a := startRedis(t, client, "exec-a", members.Options{Prefix: "p:"})
	entry := func(name string, heartbeat time.Time) string {
		b, err := json.Marshal(map[string]any{"name": name, "address": "x:1", "startedAt": heartbeat.Add(-time.Hour), "heartbeatAt": heartbeat})
		require.NoError(t, err)
		return string(b)
	}
	now := time.Now().UTC()
	require.NoError(t, client.HSet(ctx, keys.Executors(),
		"gone-long", entry("gone-long", now.Add(-2*time.Hour)),
		"gone-lately", entry("gone-lately", now.Add(-time.Minute)),
		"frozen-clock", entry("frozen-clock", now.Add(-3*time.Hour)),
	).Err())
	// frozen-clock's heartbeat time is old but its key is there: alive, kept.
	require.NoError(t, client.Set(ctx, keys.Executor("frozen-clock"), `{"heartbeatAt":"2000-01-01T00:00:00Z","runs":1}`, time.Minute).Err())

	list, err := a.List(ctx)
	require.NoError(t, err)
	assertNames(t, []string{"exec-a", "frozen-clock", "gone-lately"}, list)
	assert.True(t, list[1].Alive)
	assert.False(t, list[2].Alive)
	has, err := client.HExists(ctx, keys.Executors(), "gone-long").Result()
	require.NoError(t, err)
	assert.False(t, has, "pruned from the hash")
}

// While Redis is away the loop logs once and keeps trying; a Redis back empty gets the
// registration again.
func TestMembersRedisSurvivesAnOutage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rs := redistest.Start(t)
	client := rs.Client()
	var out logs
	a := startRedis(t, client, "exec-a", members.Options{Logger: out.logger()})
	requireAlive(t, a, "exec-a", true)

	rs.Kill()
	_, err := a.List(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "members: ")
	require.Eventually(t, func() bool { return out.count("members: Redis unavailable") == 1 }, waitFor, tick)
	// A few more failed refreshes, still one warning.
	require.Never(t, func() bool { return out.count("members: Redis unavailable") > 1 }, ttl, 50*time.Millisecond)

	rs.Restart() // empty
	requireAlive(t, a, "exec-a", true)
	require.Eventually(t, func() bool { return out.count("members: heartbeat written again") == 1 }, waitFor, tick)
}

// Not parallel: the goroutine counts are the whole process's.
func TestMembersRedisStopLeaksNoGoroutines(t *testing.T) {
	client := redistest.Start(t).Client()
	require.NoError(t, client.Ping(context.Background()).Err())
	before := redistest.SettledGoroutines(t)
	r := newRedis(t, client, "exec-a", members.Options{TTL: 300 * time.Millisecond})
	require.NoError(t, r.Start(context.Background()))
	requireAlive(t, r, "exec-a", true)
	require.Eventually(t, func() bool { // a refresh or two ran
		m := byName(t, r)["exec-a"]
		return m.LastHeartbeat.After(m.StartedAt)
	}, waitFor, tick)
	require.NoError(t, r.Stop(context.Background()))
	redistest.RequireGoroutinesBackTo(t, before)
}

// A SET NX whose reply was lost is sent again by go-redis and finds the key it set: the
// executor starts, its own key is not a duplicate.
func TestMembersRedisStartSurvivesALostReply(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	var lost atomic.Bool
	fp := rs.NewFaultProxy(redistest.Faults{Rule: func(chunk []byte) redistest.Fault {
		if strings.Contains(strings.ToLower(string(chunk)), "nx") && strings.Contains(string(chunk), "executor:executor:{lossy}") &&
			lost.CompareAndSwap(false, true) {
			return redistest.Fault{Kind: redistest.LoseReply}
		}
		return redistest.Fault{Kind: redistest.Pass}
	}})
	fp.Inject(true)
	client := redis.NewClient(&redis.Options{Addr: fp.Addr(), MaxRetries: 1})
	t.Cleanup(func() { _ = client.Close() })
	r := startRedis(t, client, "lossy", members.Options{})
	require.True(t, lost.Load(), "the reply of the SET NX was lost")
	requireAlive(t, r, "lossy", true)
}

// The executor itself lists the runs it has now, not those of its last heartbeat (every
// TTL/3, here 10 s); another executor lists them as of that heartbeat.
func TestMembersRedisListsItsOwnRunsNow(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client()
	var runs atomic.Int64
	runs.Store(13)
	const long = 30 * time.Second
	b := startRedis(t, client, "exec-b", members.Options{TTL: long, Runs: func() int { return int(runs.Load()) }})
	a := startRedis(t, client, "exec-a", members.Options{TTL: long})
	require.Equal(t, 13, byName(t, a)["exec-b"].Runs)
	runs.Store(40)
	assert.Equal(t, 40, byName(t, b)["exec-b"].Runs, "the executor itself lists its runs now")
	assert.Equal(t, 13, byName(t, a)["exec-b"].Runs, "another lists them as of the last heartbeat")
}
