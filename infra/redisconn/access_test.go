package redisconn_test

import (
	"context"
	"crypto/tls"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/redisconn"
	"github.com/executor-dev/executor/infra/redistest"
)

// ExecutorACL is the ACL rule docs/redis.md gives an executor's user (prefix "executor:"),
// without the Redis Cluster and Sentinel extras.
const ExecutorACL = "resetkeys ~executor:* resetchannels &executor:* -@all " +
	"+ping +time +select +info +client|id +client|unblock " +
	"+multi +exec +discard +eval +evalsha +script|load +script|exists " +
	"+get +set +getdel +getrange +del +exists +expire +pexpire +persist +pttl " +
	"+hget +hgetall +hmget +hset +hdel +hincrby +hlen +hexists " +
	"+zadd +zcard +zrange +zrevrange +zrevrank +zrangebyscore +zrevrangebyscore +zrem +zscore +zpopmin " +
	"+sadd +srem +smembers +srandmember +xadd +xlen +xdel +xread +xrange +xrevrange +publish +subscribe +unsubscribe"

// needs are the executor's needs under the default prefix (as server builds them).
func needs() redisconn.Needs {
	return redisconn.Needs{
		Prefix:   "executor:",
		Probe:    "executor:ready:{access-test}",
		Stream:   "executor:events",
		Channels: []string{"executor:signals", "executor:dispatch:wake", "executor:schedule:wake"},
	}
}

// aclUser adds the ACL user name (password "pw") with rule to srv and returns a client
// logged in as that user.
func aclUser(t *testing.T, srv *redistest.Server, name, rule string) *redis.Client {
	t.Helper()
	args := []any{"ACL", "SETUSER", name, "reset", "on", ">pw"}
	for _, f := range strings.Fields(rule) {
		args = append(args, f)
	}
	require.NoError(t, srv.Client().Do(context.Background(), args...).Err())
	return client(t, "redis://"+name+":pw@"+srv.Addr()+"/0")
}

// client opens the executor's client for url, closed when the test ends.
func client(t *testing.T, url string) *redis.Client {
	t.Helper()
	conn, err := redisconn.Open(redisconn.Config{URL: url})
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Client.Close() })
	return conn.Client.(*redis.Client)
}

// check runs CheckAccess with a deadline.
func check(t *testing.T, c redis.UniversalClient) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return redisconn.CheckAccess(ctx, c, needs())
}

// requireDenied requires err to be a refusal naming each of says.
func requireDenied(t *testing.T, err error, says ...string) {
	t.Helper()
	require.ErrorIs(t, err, redisconn.ErrDenied)
	for _, s := range says {
		assert.Contains(t, err.Error(), s)
	}
	assert.Contains(t, err.Error(), redisconn.NeedsDoc)
}

// Whoever may do what the executor needs passes, by ACL DRYRUN (the default user may run it)
// or by real probes (the ACL rule of docs/redis.md, which does not grant ACL), and the probes
// leave nothing behind.
func TestCheckAccessPassesWhatTheExecutorNeeds(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	require.NoError(t, check(t, client(t, srv.URL())), "the default user: ACL DRYRUN")
	probed := aclUser(t, srv, "executor", ExecutorACL)
	require.NoError(t, check(t, probed), "the documented ACL: real probes")
	n, err := srv.Client().Exists(ctx, needs().Probe).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "the probe key is deleted")
	dry := aclUser(t, srv, "dry", ExecutorACL+" +acl|whoami +acl|dryrun")
	require.NoError(t, check(t, dry), "the documented ACL with ACL DRYRUN")
}

// Each refusal names its cause and the remedy, whether ACL DRYRUN found it or a real probe.
func TestCheckAccessNamesWhatRedisRefuses(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	tests := []struct {
		name string
		rule string // the ACL user's
		says []string
	}{
		{"no channel", strings.Replace(ExecutorACL, "&executor:*", "", 1),
			[]string{"cannot PUBLISH on channel executor:signals", "NOPERM", "grant it &executor:*"}},
		{"one channel of three", strings.Replace(ExecutorACL, "&executor:*", "&executor:signals &executor:dispatch:wake", 1),
			[]string{"cannot PUBLISH on channel executor:schedule:wake", "grant it &executor:*"}},
		{"no EVAL", ExecutorACL + " -eval", []string{"cannot run EVAL", "NOPERM", "grant it +eval"}},
		{"no SCRIPT LOAD", ExecutorACL + " -script|load", []string{"cannot run SCRIPT LOAD", "grant it +script|load"}},
		{"no EVALSHA", ExecutorACL + " -evalsha", []string{"cannot run EVALSHA", "grant it +evalsha"}},
		{"no SUBSCRIBE", ExecutorACL + " -subscribe", []string{"cannot run SUBSCRIBE", "grant it +subscribe"}},
		{"no TIME", ExecutorACL + " -time", []string{"cannot run TIME", "grant it +time"}},
		{"no XADD", ExecutorACL + " -xadd", []string{"cannot run XADD", "grant it +xadd"}},
		{"no hashes", ExecutorACL + " -hset", []string{"cannot run HSET", "grant it +hset"}},
		{"no MULTI", ExecutorACL + " -multi", []string{"cannot run MULTI", "grant it +multi"}},
		{"other keys", strings.Replace(ExecutorACL, "~executor:*", "~other:*", 1),
			[]string{"cannot SET on key executor:ready:{access-test}", "NOPERM", "grant it ~executor:*"}},
		{"read-only keys", strings.Replace(ExecutorACL, "~executor:*", "%R~executor:*", 1),
			[]string{"cannot SET on key executor:ready:{access-test}", "grant it ~executor:*"}},
	}
	for i, tc := range tests {
		for _, dry := range []bool{false, true} {
			name, rule := tc.name+", probed", tc.rule
			if dry {
				name, rule = tc.name+", ACL DRYRUN", rule+" +acl|whoami +acl|dryrun"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				user := "u" + strconv.Itoa(i) + strconv.FormatBool(dry)
				err := check(t, aclUser(t, srv, user, rule))
				requireDenied(t, err, tc.says...)
				if !dry {
					assert.True(t, outage.Is(err), "the reply is an outage: %v", err)
				}
			})
		}
	}
	n, err := srv.Client().Exists(ctx, needs().Probe).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "no probe key left behind")
}

// A Redis with a password, reached without one or with a wrong one.
func TestCheckAccessNamesAMissingOrWrongPassword(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	require.NoError(t, srv.Client().ConfigSet(context.Background(), "requirepass", "s3cret").Err())
	tests := []struct {
		name, url string
		says      []string
	}{
		{"none", "redis://" + srv.Addr() + "/0", []string{"NOAUTH", "asks for a password, and --redis gives none"}},
		{"wrong", "redis://:wrong@" + srv.Addr() + "/0", []string{"WRONGPASS", "refuses the user and password"}},
		{"unknown user", "redis://nobody:s3cret@" + srv.Addr() + "/0", []string{"WRONGPASS"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := check(t, client(t, tc.url))
			requireDenied(t, err, tc.says...)
			assert.True(t, outage.Is(err))
			assert.True(t, outage.Denied(err))
		})
	}
	require.NoError(t, check(t, client(t, "redis://:s3cret@"+srv.Addr()+"/0")), "the right password")
}

// A command renamed away (rename-command TIME ""): named, by ACL DRYRUN and by a probe.
func TestCheckAccessNamesARenamedCommand(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Config("rename-command TIME \"\"\n"))
	err := check(t, client(t, srv.URL()))
	requireDenied(t, err, "does not know the command TIME", "rename-command")
	probed := aclUser(t, srv, "executor", strings.Replace(ExecutorACL, "+time ", "", 1)) // TIME is unknown: it cannot be granted
	err = check(t, probed)
	requireDenied(t, err, "does not know the command TIME", "rename-command")
	assert.True(t, outage.Is(err))
}

// A Redis that does not answer refuses nothing: the check fails without ErrDenied.
func TestCheckAccessOfARedisThatDoesNotAnswer(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := client(t, srv.URL())
	srv.Kill()
	err := check(t, c)
	require.Error(t, err)
	require.NotErrorIs(t, err, redisconn.ErrDenied)
	assert.True(t, outage.Is(err))
}

// rediss:// to a Redis whose certificate comes from a CA the executor does not trust: the
// refusal names the unknown authority and how to trust it; the same Redis passes for a
// client that trusts the CA.
func TestCheckAccessNamesAnUntrustedCertificate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pool := redistest.WriteTLSFiles(t, dir)
	tlsPort := freePort(t)
	srv := redistest.Start(t, redistest.Args("--tls-port", tlsPort,
		"--tls-cert-file", filepath.Join(dir, "redis.crt"), "--tls-key-file", filepath.Join(dir, "redis.key"),
		"--tls-ca-cert-file", filepath.Join(dir, "ca.crt"), "--tls-auth-clients", "no"))
	err := check(t, client(t, "rediss://127.0.0.1:"+tlsPort+"/0"))
	requireDenied(t, err, "does not trust the TLS certificate", "unknown authority", "SSL_CERT_FILE")
	assert.True(t, outage.Is(err), "an outage: %v", err)
	assert.True(t, outage.Denied(err))

	trusting := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + tlsPort, TLSConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}})
	t.Cleanup(func() { _ = trusting.Close() })
	require.NoError(t, check(t, trusting), "trusted, the same server passes")
	_ = srv
}

// freePort returns a free loopback port, as a string.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// On a Redis Cluster, the documented rule with its Cluster extras passes (the probes routed
// by slot, the channels' through any node), and one without channels is named.
func TestCheckAccessOnARedisCluster(t *testing.T) {
	t.Parallel()
	cluster := redistest.StartCluster(t, 3, 0)
	ctx := context.Background()
	setUser := func(name, rule string) {
		for _, m := range cluster.Masters() {
			args := []any{"ACL", "SETUSER", name, "reset", "on", ">pw"}
			for _, f := range strings.Fields(rule) {
				args = append(args, f)
			}
			require.NoError(t, m.Client().Do(ctx, args...).Err())
		}
	}
	open := func(name string) redis.UniversalClient {
		conn, err := redisconn.Open(redisconn.Config{URL: strings.Replace(cluster.URL(), "redis://", "redis://"+name+":pw@", 1)})
		require.NoError(t, err)
		t.Cleanup(func() { _ = conn.Client.Close() })
		return conn.Client
	}
	const clusterExtras = " +cluster|slots +cluster|nodes +command"
	setUser("executor", ExecutorACL+clusterExtras)
	require.NoError(t, check(t, open("executor")))
	setUser("nochannel", strings.Replace(ExecutorACL, "&executor:*", "", 1)+clusterExtras)
	requireDenied(t, check(t, open("nochannel")), "cannot PUBLISH on channel executor:signals")
	require.NoError(t, check(t, cluster.Client()), "the default user: ACL DRYRUN")
}
