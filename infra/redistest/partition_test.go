package redistest_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
)

// rawConn is one plain TCP connection through the proxy, speaking RESP by hand, so that a
// test sees what go-redis would hide: whether the connection stays open, and which reply
// arrives on it.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	rd *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return &rawConn{t: t, c: c, rd: bufio.NewReader(c)}
}

// send writes one inline command.
func (r *rawConn) send(cmd string) {
	r.t.Helper()
	require.NoError(r.t, r.c.SetWriteDeadline(time.Now().Add(2*time.Second)))
	_, err := io.WriteString(r.c, cmd+"\r\n")
	require.NoError(r.t, err, "writing %q", cmd)
}

// reply reads one reply line within d.
func (r *rawConn) reply(d time.Duration) (string, error) {
	require.NoError(r.t, r.c.SetReadDeadline(time.Now().Add(d)))
	line, err := r.rd.ReadString('\n')
	if err != nil {
		return "", err
	}
	return line[:len(line)-2], nil
}

// requireSilent asserts that nothing arrives within d and that the connection is still open
// (a read timeout, not an EOF or a reset).
func (r *rawConn) requireSilent(d time.Duration, why string) {
	r.t.Helper()
	got, err := r.reply(d)
	require.Error(r.t, err, "%s: a reply came through: %q", why, got)
	require.ErrorIs(r.t, err, os.ErrDeadlineExceeded, "%s: the connection must stay open, not be closed or reset", why)
}

// A black hole forwards nothing either way and closes nothing: a request sent into it never
// reaches Redis, the reply to a request Redis applied is lost, a new connection is accepted
// but answers nothing; after Restore the same connections work again and go-redis reconnects.
func TestBlackHoleKeepsConnectionsOpenAndForwardsNothing(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := srv.NewProxy()
	ctx := context.Background()
	direct := srv.Client()

	old := dialRaw(t, proxy.Addr())
	old.send("PING")
	got, err := old.reply(2 * time.Second)
	require.NoError(t, err)
	require.Equal(t, "+PONG", got)
	blocked := dialRaw(t, proxy.Addr())
	blocked.send("BLPOP queue 0") // waits in Redis for an element
	c := redis.NewClient(&redis.Options{Addr: proxy.Addr(), ReadTimeout: 300 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.Ping(ctx).Err())

	proxy.BlackHole()
	old.send("SET lost 1")
	old.requireSilent(500*time.Millisecond, "a request sent into the black hole")
	n, err := direct.Exists(ctx, "lost").Result()
	require.NoError(t, err)
	assert.Zero(t, n, "the request vanished: Redis never saw it")

	require.NoError(t, direct.RPush(ctx, "queue", "x").Err())
	require.Eventually(t, func() bool { return direct.LLen(ctx, "queue").Val() == 0 },
		2*time.Second, 10*time.Millisecond, "Redis answered the blocked BLPOP (it popped the element)")
	blocked.requireSilent(500*time.Millisecond, "the reply to an applied request")

	fresh := dialRaw(t, proxy.Addr()) // accepted: no refusal, no reset
	fresh.send("PING")
	fresh.requireSilent(500*time.Millisecond, "a connection opened during the black hole")

	err = c.Set(ctx, "via-client", "v", 0).Err()
	require.Error(t, err, "go-redis times out")
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "a timeout, not a refusal or a reset: %v", err)
	assert.Positive(t, proxy.Stats().BlackHoled)

	proxy.Restore()
	old.send("PING")
	got, err = old.reply(2 * time.Second)
	require.NoError(t, err, "the connection that lived through the black hole works again")
	assert.Equal(t, "+PONG", got, "the request lost in the black hole got no reply")
	fresh.send("ECHO after")
	got, err = fresh.reply(2 * time.Second)
	require.NoError(t, err)
	assert.Equal(t, "$5", got, "the PING sent into the black hole was lost; ECHO's reply comes first")
	require.NoError(t, c.Set(ctx, "via-client", "v", 0).Err(), "go-redis works again after Restore")
	n, err = direct.Exists(ctx, "lost").Result()
	require.NoError(t, err)
	assert.Zero(t, n, "nothing lost in the black hole is delivered late")
}

// Cut and BlackHole are different partitions: Cut resets every connection and refuses new
// ones; Restore ends either.
func TestCutResetsWhereBlackHoleIsSilent(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := srv.NewProxy()

	conn := dialRaw(t, proxy.Addr())
	proxy.BlackHole()
	conn.send("PING")
	conn.requireSilent(300*time.Millisecond, "black hole")
	proxy.Cut()
	_, err := conn.reply(2 * time.Second)
	require.Error(t, err)
	require.NotErrorIs(t, err, os.ErrDeadlineExceeded, "a Cut closes the connection at once")
	proxy.Restore()

	after := dialRaw(t, proxy.Addr())
	after.send("PING")
	got, err := after.reply(2 * time.Second)
	require.NoError(t, err, "Restore ends both the cut and the black hole")
	assert.Equal(t, "+PONG", got)
}

// SetLatency delays every request chunk by d, forwards it (late, after the client has timed
// out, if so) and keeps each connection's order, without stacking the delays of chunks in
// flight together; SetLatency(0) ends it.
func TestSetLatencyDelaysRequestsInOrderAndForwardsThem(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := srv.NewProxy()
	ctx := context.Background()
	direct := srv.Client()
	const lag = 1500 * time.Millisecond

	conn := dialRaw(t, proxy.Addr())
	c := redis.NewClient(&redis.Options{Addr: proxy.Addr(), ReadTimeout: 500 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.Ping(ctx).Err(), "a pooled connection, its handshake done before the latency")
	proxy.SetLatency(lag)
	start := time.Now()
	for _, v := range []string{"a", "b", "c"} {
		conn.send("RPUSH list " + v) // three chunks, one after the other, all in flight at once
		time.Sleep(50 * time.Millisecond)
	}
	for i, want := range []string{":1", ":2", ":3"} {
		got, err := conn.reply(10 * time.Second)
		require.NoError(t, err, "reply %d: delayed, not dropped", i+1)
		require.Equal(t, want, got, "replies in the order of the requests")
		if i == 0 {
			assert.GreaterOrEqual(t, time.Since(start), lag, "the first request waited for the latency")
		}
	}
	// Without a delay line each chunk would wait behind the previous one's full delay (3 × lag).
	assert.Less(t, time.Since(start), 3*lag, "chunks in flight together are delayed together, not one after the other")
	list, err := direct.LRange(ctx, "list", 0, -1).Result()
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, list)

	require.Error(t, c.Set(ctx, "late", "v", 0).Err(), "the client times out before the reply")
	require.Eventually(t, func() bool { return direct.Get(ctx, "late").Val() == "v" },
		5*time.Second, 20*time.Millisecond, "the request reaches Redis late anyway")
	assert.GreaterOrEqual(t, proxy.Stats().Lagged, int64(4))

	proxy.SetLatency(0)
	require.NoError(t, c.Set(ctx, "prompt", "v", 0).Err(), "no latency any more: within the 500 ms read timeout")
	assert.Zero(t, proxy.Stats().Chunks, "latency is no injected fault: nothing was decided")
}
