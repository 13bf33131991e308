package outage_test

// Is against real replies: every error below comes from a private redis-server (started by
// redistest on a free port) brought into the state that makes it answer so, through a real
// go-redis client, so the table holds the values the executor meets in production (typed by
// go-redis's reply parser, wrapped as the executor wraps them).

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/redistest"
)

// rpWait bounds how long a server takes to get into the state a case needs.
const rpWait = 20 * time.Second

// rpClient is a client of srv that neither retries (a refused command answers at once) nor
// shares connections with the test's other clients.
func rpClient(t *testing.T, srv *redistest.Server) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1, ReadTimeout: time.Second, WriteTimeout: time.Second})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// rpFreePort returns a free loopback port (a cluster node's bus port).
func rpFreePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// rpUntil calls produce until it returns an error for which ok holds, and returns it.
func rpUntil(t *testing.T, what string, produce func() error, ok func(error) bool) error {
	t.Helper()
	var err error
	require.Eventually(t, func() bool {
		err = produce()
		return err != nil && ok(err)
	}, rpWait, 10*time.Millisecond, "%s: last error %v", what, err)
	return err
}

// rpOutOfMemory returns a client of a server over its maxmemory with the noeviction policy.
func rpOutOfMemory(t *testing.T) *redis.Client {
	t.Helper()
	c := rpClient(t, redistest.Start(t, redistest.Args("--maxmemory-policy", "noeviction")))
	require.NoError(t, c.ConfigSet(context.Background(), "maxmemory", "1").Err())
	return c
}

// rpCluster starts a cluster-enabled server and returns it, its client and its node id.
func rpCluster(t *testing.T) (*redistest.Server, *redis.Client, string, string) {
	t.Helper()
	bus := rpFreePort(t)
	srv := redistest.Start(t, redistest.Args("--cluster-enabled", "yes", "--cluster-port", bus))
	c := rpClient(t, srv)
	id, err := c.ClusterMyID(context.Background()).Result()
	require.NoError(t, err)
	return srv, c, id, bus
}

// The producers: each returns the error a real server answers in a given state.

func rpOOM(t *testing.T) error {
	return rpOutOfMemory(t).Set(context.Background(), "k", "v", 0).Err()
}

func rpOOMInScript(t *testing.T) error {
	return rpOutOfMemory(t).Eval(context.Background(), "return redis.call('SET', KEYS[1], ARGV[1])", []string{"k"}, "v").Err()
}

func rpOOMInPipeline(t *testing.T) error {
	_, err := rpOutOfMemory(t).Pipelined(context.Background(), func(p redis.Pipeliner) error {
		p.HSet(context.Background(), "h", "f", "v")
		p.Get(context.Background(), "k")
		return nil
	})
	return err
}

// rpExecAbort is a read in a MULTI (as the tenant lock's holder read is) on a server out of
// memory: Redis 7 refuses every command queued in a transaction then, and EXEC discards it.
func rpExecAbort(t *testing.T) error {
	ctx := context.Background()
	_, err := rpOutOfMemory(t).TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Get(ctx, "k")
		p.PTTL(ctx, "k")
		return nil
	})
	return err
}

// rpReplica returns a client of a replica of a master that does not answer (a closed port).
func rpReplica(t *testing.T) *redis.Client {
	t.Helper()
	c := rpClient(t, redistest.Start(t))
	require.NoError(t, c.Do(context.Background(), "REPLICAOF", "127.0.0.1", rpFreePort(t)).Err())
	return c
}

func rpReadOnly(t *testing.T) error {
	return rpReplica(t).Set(context.Background(), "k", "v", 0).Err()
}

func rpMasterDown(t *testing.T) error {
	c := rpReplica(t)
	ctx := context.Background()
	require.NoError(t, c.ConfigSet(ctx, "replica-serve-stale-data", "no").Err())
	return c.Get(ctx, "k").Err()
}

func rpNoReplicas(t *testing.T) error {
	c := rpClient(t, redistest.Start(t, redistest.Args("--min-replicas-to-write", "1")))
	return c.Set(context.Background(), "k", "v", 0).Err()
}

// rpMisconf makes a snapshot fail (its directory removed) with stop-writes-on-bgsave-error on.
func rpMisconf(t *testing.T) error {
	srv := redistest.Start(t, redistest.Args("--enable-protected-configs", "yes", "--stop-writes-on-bgsave-error", "yes"))
	c := rpClient(t, srv)
	ctx := context.Background()
	gone := filepath.Join(t.TempDir(), "gone")
	require.NoError(t, os.Mkdir(gone, 0o755))
	require.NoError(t, c.ConfigSet(ctx, "save", "3600 1").Err())
	require.NoError(t, c.ConfigSet(ctx, "dir", gone).Err())
	require.NoError(t, os.Remove(gone))
	require.NoError(t, c.BgSave(ctx).Err())
	require.Eventually(t, func() bool {
		info, err := c.Info(ctx, "persistence").Result()
		return err == nil && strings.Contains(info, "rdb_last_bgsave_status:err")
	}, rpWait, 10*time.Millisecond, "the snapshot did not fail")
	return c.Set(ctx, "k", "v", 0).Err()
}

// rpBusy runs a script that never ends on one connection and returns what another command
// gets meanwhile; the script is killed when the test ends.
func rpBusy(t *testing.T) error {
	srv := redistest.Start(t, redistest.Args("--busy-reply-threshold", "50"))
	ctx := context.Background()
	looping := rpClient(t, srv)
	done := make(chan error, 1)
	go func() { done <- looping.Do(ctx, "EVAL", "while true do end", "0").Err() }()
	c := rpClient(t, srv)
	err := rpUntil(t, "BUSY", func() error { return c.Ping(ctx).Err() }, func(err error) bool {
		return redis.HasErrorPrefix(err, "BUSY")
	})
	require.NoError(t, c.ScriptKill(ctx).Err())
	killed := <-done
	require.Error(t, killed)
	assert.False(t, outage.Is(killed), "the killed script's own error (%v) is an answer about it", killed)
	return err
}

// rpLoading reloads a dataset slowly (key-load-delay) and returns what a command gets meanwhile.
func rpLoading(t *testing.T) error {
	srv := redistest.Start(t, redistest.Args("--enable-debug-command", "yes",
		"--key-load-delay", "100", "--loading-process-events-interval-bytes", "1024"))
	ctx := context.Background()
	c := rpClient(t, srv)
	require.NoError(t, c.Do(ctx, "DEBUG", "POPULATE", "20000", "k", "10").Err())
	reload := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1, ReadTimeout: time.Minute})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = reload.Do(ctx, "DEBUG", "RELOAD").Err()
	}()
	t.Cleanup(func() { <-done; _ = reload.Close() })
	return rpUntil(t, "LOADING", func() error { return c.Get(ctx, "k:1").Err() }, func(err error) bool {
		return redis.HasErrorPrefix(err, "LOADING")
	})
}

func rpClusterDown(t *testing.T) error {
	_, c, _, _ := rpCluster(t)
	return c.Get(context.Background(), "k").Err()
}

// rpTryAgain reads two keys of a slot being migrated, one of them missing.
func rpTryAgain(t *testing.T) error {
	ctx := context.Background()
	_, a, _, _ := rpCluster(t)
	_, b, bID, bBus := rpCluster(t)
	require.NoError(t, a.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", "0", "16383").Err())
	require.Eventually(t, func() bool {
		info, err := a.ClusterInfo(ctx).Result()
		return err == nil && strings.Contains(info, "cluster_state:ok")
	}, rpWait, 20*time.Millisecond, "the cluster never got ok")
	bPort := strings.TrimPrefix(b.Options().Addr, "127.0.0.1:")
	require.NoError(t, a.Do(ctx, "CLUSTER", "MEET", "127.0.0.1", bPort, bBus).Err())
	require.Eventually(t, func() bool {
		nodes, err := a.ClusterNodes(ctx).Result()
		return err == nil && strings.Contains(nodes, bID)
	}, rpWait, 20*time.Millisecond, "the nodes never met")
	slot, err := a.ClusterKeySlot(ctx, "{a}").Result()
	require.NoError(t, err)
	require.NoError(t, a.Set(ctx, "{a}x", "v", 0).Err())
	require.NoError(t, a.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", bID).Err())
	return a.MGet(ctx, "{a}x", "{a}y").Err()
}

// rpMaxClients connects to a server that has all the clients it takes: it answers "ERR max
// number of clients reached" and closes the connection, which go-redis, writing its HELLO,
// meets as a broken pipe.
func rpMaxClients(t *testing.T) error {
	srv := redistest.Start(t, redistest.Args("--maxclients", "1"))
	first := rpClient(t, srv)
	require.NoError(t, first.Ping(context.Background()).Err()) // holds the only connection
	return rpClient(t, srv).Ping(context.Background()).Err()
}

func rpRefused(t *testing.T) error {
	srv := redistest.Start(t)
	c := rpClient(t, srv)
	srv.Kill()
	return c.Ping(context.Background()).Err()
}

// rpEOF is a pooled connection whose server died.
func rpEOF(t *testing.T) error {
	srv := redistest.Start(t)
	c := rpClient(t, srv)
	require.NoError(t, c.Ping(context.Background()).Err())
	srv.Kill()
	return c.Ping(context.Background()).Err()
}

func rpFrozen(t *testing.T) error {
	srv := redistest.Start(t)
	c := rpClient(t, srv)
	require.NoError(t, c.Ping(context.Background()).Err())
	srv.Freeze()
	t.Cleanup(srv.Thaw) // before the kill: cleanups run last first
	return c.Ping(context.Background()).Err()
}

// Answers about the command or its data: never an outage.

func rpNil(t *testing.T) error {
	return rpClient(t, redistest.Start(t)).Get(context.Background(), "missing").Err()
}

func rpWrongType(t *testing.T) error {
	c := rpClient(t, redistest.Start(t))
	ctx := context.Background()
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
	return c.HGet(ctx, "k", "f").Err()
}

func rpBusyKey(t *testing.T) error {
	c := rpClient(t, redistest.Start(t))
	ctx := context.Background()
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
	dump, err := c.Dump(ctx, "k").Result()
	require.NoError(t, err)
	return c.Restore(ctx, "k", 0, dump).Err()
}

func rpBusyGroup(t *testing.T) error {
	c := rpClient(t, redistest.Start(t))
	ctx := context.Background()
	require.NoError(t, c.XGroupCreateMkStream(ctx, "s", "g", "$").Err())
	return c.XGroupCreate(ctx, "s", "g", "$").Err()
}

func rpNoScript(t *testing.T) error {
	return rpClient(t, redistest.Start(t)).EvalSha(context.Background(), strings.Repeat("0", 40), nil).Err()
}

func rpScriptError(t *testing.T) error {
	return rpClient(t, redistest.Start(t)).Eval(context.Background(), "return redis.error_reply('conflict')", nil).Err()
}

// Redis refusing the executor itself: its password, its ACL user, a command it needs, the TLS
// certificate.

// rpAuthClient is a client of srv as user (default: "") with password.
func rpAuthClient(t *testing.T, srv *redistest.Server, user, password string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), Username: user, Password: password, MaxRetries: -1,
		ReadTimeout: time.Second, WriteTimeout: time.Second})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// rpPassworded starts a server with requirepass s3cret (set once it answers: redistest pings it
// without a password).
func rpPassworded(t *testing.T) *redistest.Server {
	t.Helper()
	srv := redistest.Start(t)
	require.NoError(t, rpClient(t, srv).ConfigSet(context.Background(), "requirepass", "s3cret").Err())
	return srv
}

func rpNoAuth(t *testing.T) error {
	return rpAuthClient(t, rpPassworded(t), "", "").Set(context.Background(), "k", "v", 0).Err()
}

func rpWrongPass(t *testing.T) error {
	return rpAuthClient(t, rpPassworded(t), "", "wrong").Set(context.Background(), "k", "v", 0).Err()
}

// rpACLUser is a client of a new server logged in as an ACL user with rule (keys k*, channel
// c, every command unless rule says otherwise).
func rpACLUser(t *testing.T, rule ...any) *redis.Client {
	t.Helper()
	srv := redistest.Start(t)
	args := append([]any{"ACL", "SETUSER", "executor", "on", ">pw", "~k*", "&c", "+@all"}, rule...)
	require.NoError(t, rpClient(t, srv).Do(context.Background(), args...).Err())
	return rpAuthClient(t, srv, "executor", "pw")
}

func rpNoPermCommand(t *testing.T) error {
	return rpACLUser(t, "-eval").Eval(context.Background(), "return 1", nil).Err()
}

func rpNoPermKey(t *testing.T) error {
	return rpACLUser(t).Set(context.Background(), "other", "v", 0).Err()
}

func rpNoPermChannel(t *testing.T) error {
	return rpACLUser(t).Publish(context.Background(), "other", "m").Err()
}

// rpNoPermInScript is a script's PUBLISH to a channel the user may not use (as push.lua's on
// the dispatch wake channel): Redis 7.0 answers it with ERR, not NOPERM.
func rpNoPermInScript(t *testing.T) error {
	return rpACLUser(t).Eval(context.Background(), "return redis.call('PUBLISH', KEYS[1], 'm')", []string{"k"}).Err()
}

func rpUnknownCommand(t *testing.T) error {
	return rpClient(t, redistest.Start(t)).Do(context.Background(), "NOSUCHCOMMAND").Err()
}

// rpRenamed starts a server without TIME (rename-command TIME "").
func rpRenamed(t *testing.T) *redis.Client {
	t.Helper()
	return rpClient(t, redistest.Start(t, redistest.Config("rename-command TIME \"\"\n")))
}

func rpRenamedTime(t *testing.T) error {
	return rpRenamed(t).Time(context.Background()).Err()
}

func rpRenamedInScript(t *testing.T) error {
	return rpRenamed(t).Eval(context.Background(), "return redis.call('TIME')", nil).Err()
}

// rpUntrusted is a rediss:// connection to a server whose certificate a private CA signed.
func rpUntrusted(t *testing.T) error {
	dir := t.TempDir()
	redistest.WriteTLSFiles(t, dir)
	port := rpFreePort(t)
	redistest.Start(t, redistest.Args("--tls-port", port,
		"--tls-cert-file", filepath.Join(dir, "redis.crt"), "--tls-key-file", filepath.Join(dir, "redis.key"),
		"--tls-ca-cert-file", filepath.Join(dir, "ca.crt"), "--tls-auth-clients", "no"))
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + port, MaxRetries: -1, TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12}})
	t.Cleanup(func() { _ = c.Close() })
	return c.Ping(context.Background()).Err()
}

func rpCancelled(t *testing.T) error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return rpClient(t, redistest.Start(t)).Ping(ctx).Err()
}

// rpDenied are the cases of TestIsClassifiesRealRedisReplies where Redis refuses the executor
// itself (outage.Denied): only a change of configuration ends them.
var rpDenied = map[string]bool{
	"NOAUTH without a password": true, "WRONGPASS": true,
	"NOPERM on a command": true, "NOPERM on a key": true, "NOPERM on a channel": true, "NOPERM on a channel, in a script": true,
	"unknown command": true, "TIME renamed away": true, "TIME renamed away, in a script": true,
	"TLS certificate from an unknown authority": true,
}

func TestIsClassifiesRealRedisReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		produce func(t *testing.T) error
		want    bool
		says    string // the reply's text starts with it ("" when it is no reply)
	}{
		{"OOM on a write", rpOOM, true, "OOM "},
		{"OOM in a script", rpOOMInScript, true, "OOM "},
		{"OOM in a pipeline", rpOOMInPipeline, true, "OOM "},
		{"EXECABORT of a transaction under OOM", rpExecAbort, true, "EXECABORT "},
		{"READONLY replica", rpReadOnly, true, "READONLY "},
		{"MASTERDOWN replica", rpMasterDown, true, "MASTERDOWN "},
		{"NOREPLICAS", rpNoReplicas, true, "NOREPLICAS "},
		{"MISCONF after a failed snapshot", rpMisconf, true, "MISCONF "},
		{"BUSY running a script", rpBusy, true, "BUSY "},
		{"LOADING the dataset", rpLoading, true, "LOADING "},
		{"CLUSTERDOWN", rpClusterDown, true, "CLUSTERDOWN "},
		{"TRYAGAIN during resharding", rpTryAgain, true, "TRYAGAIN "},
		{"max number of clients", rpMaxClients, true, ""}, // the server closes the connection
		{"connection refused", rpRefused, true, ""},
		{"server died under a pooled connection", rpEOF, true, ""},
		{"frozen server times out", rpFrozen, true, ""},
		{"NOAUTH without a password", rpNoAuth, true, "NOAUTH "},
		{"WRONGPASS", rpWrongPass, true, "WRONGPASS "},
		{"NOPERM on a command", rpNoPermCommand, true, "NOPERM "},
		{"NOPERM on a key", rpNoPermKey, true, "NOPERM "},
		{"NOPERM on a channel", rpNoPermChannel, true, "NOPERM "},
		{"NOPERM on a channel, in a script", rpNoPermInScript, true, "ERR The user executing the script can't publish to the channel"},
		{"unknown command", rpUnknownCommand, true, "ERR unknown command"},
		{"TIME renamed away", rpRenamedTime, true, "ERR unknown command 'time'"},
		{"TIME renamed away, in a script", rpRenamedInScript, true, "ERR Unknown Redis command called from script"},
		{"TLS certificate from an unknown authority", rpUntrusted, true, "tls: failed to verify certificate: x509: certificate signed by unknown authority"},
		{"key missing", rpNil, false, ""},
		{"WRONGTYPE", rpWrongType, false, "WRONGTYPE "},
		{"BUSYKEY", rpBusyKey, false, "BUSYKEY "},
		{"BUSYGROUP", rpBusyGroup, false, "BUSYGROUP "},
		{"NOSCRIPT", rpNoScript, false, "NOSCRIPT "},
		{"a script's own error", rpScriptError, false, "ERR conflict"},
		{"caller cancelled", rpCancelled, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.produce(t)
			require.Error(t, err)
			if tc.says != "" {
				require.True(t, strings.HasPrefix(err.Error(), tc.says), "the reply: %v", err)
			}
			assert.Equal(t, tc.want, outage.Is(err), "outage.Is(%v)", err)
			wrapped := fmt.Errorf("redisrepo: save task: %w", err)
			assert.Equal(t, tc.want, outage.Is(wrapped), "outage.Is(%v)", wrapped)
			assert.Equal(t, tc.want, outage.Is(errors.Join(errors.New("write back tasks"), wrapped)), "joined")
			assert.Equal(t, rpDenied[tc.name], outage.Denied(wrapped), "outage.Denied(%v)", wrapped)
		})
	}
}
