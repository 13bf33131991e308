package redisrepo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
)

// A run's fence bump (bump_fence.lua) is sent twice: go-redis retries it after a read timeout
// and the retry lands, while the first request is still held in the network and reaches Redis
// later (the fault test's "late" delays). A bump carries a token, and the copy that comes late
// must find itself done. Redis then goes away for a moment: the run's next write is journaled,
// and its write-back (restore_task.lua) records the token of its write in doubt as a bump
// done. It used to replace the run's bump token with it: the late copy of the run's bump then
// raised the epoch again (RUNNING at epoch 2, version +1), and the write-back of the run's
// next writes, at epoch 1, was refused as "another writer's change": the mirror forgot the
// task, and Redis kept it RUNNING at the stage it had while the executor had reported it
// COMPLETED (TestFaultInjectionEveryPlanEndsAndRedisEqualsMemory/late, FAULT_SEED=16,
// GOMAXPROCS=1; a CI failure). The hash now keeps the tokens of the last 8 bumps.
func TestALateCopyOfARunsFenceBumpAfterAWriteBackRaisesNothing(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	net, store, mon := newBumpNet(t, srv)
	ctx := context.Background()
	id := net.watchNew(t, store, "late-bump")

	// The run starts: its bump lands (a copy of it is held in the network), then RUNNING.
	net.capture.Store(true)
	tk, err := store.Tasks().BumpFence(ctx, id)
	require.NoError(t, err)
	require.NotNil(t, net.held.Load(), "the bump's request was captured")
	epoch := tk.Fence()
	require.NoError(t, tk.Start(epoch, time.Now()))
	require.NoError(t, store.Tasks().Save(ctx, tk, nil))
	cp := checkpoint.New(id)

	// A short outage: stage one completes on the mirror and is written back.
	briefOutage(t, store, mon, &net.down, func() { complete(t, store, tk, cp, 0, epoch) })
	h, _ := raw(t, srv, id, false)
	require.Equal(t, fmt.Sprint(epoch), h["fence"])
	require.Equal(t, "1", h["stage"], "stage one written back")
	t.Logf("after the write-back: fence %s version %s bump %q wtoken %q", h["fence"], h["version"], h["bump"], h["wtoken"])

	// The held copy of the bump reaches Redis now.
	reply := deliver(t, srv.Addr(), *net.held.Load())
	h, _ = raw(t, srv, id, false)
	t.Logf("after the late bump (reply %q): fence %s version %s bump %q", reply, h["fence"], h["version"], h["bump"])
	assert.Equal(t, fmt.Sprint(epoch), h["fence"], "a bump that landed already raises nothing twice")

	// Another short outage: the run completes on the mirror; the write-back must take it.
	briefOutage(t, store, mon, &net.down, func() {
		complete(t, store, tk, cp, 1, epoch)
		complete(t, store, tk, cp, 2, epoch)
	})
	fresh := redisrepo.New(srv.Client(), redisrepo.Options{}) // reads Redis alone
	got, err := fresh.Tasks().Task(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, task.Completed, got.Status(), "Redis holds the run's end")
	assert.Equal(t, 3, got.CurrentStage())
}

// briefOutage makes Redis unreachable, runs fn (its writes go to the mirror), lets Redis back and
// waits until everything journaled is written back.
func briefOutage(t *testing.T, store *redisrepo.Store, mon interface{ Degraded() (bool, time.Time) }, down *atomic.Bool, fn func()) {
	t.Helper()
	down.Store(true)
	fn()
	d, _ := mon.Degraded()
	require.True(t, d, "the writes went to the mirror")
	down.Store(false)
	require.Eventually(t, func() bool { d, _ := mon.Degraded(); return !d && store.JournalLen() == 0 },
		10*time.Second, 10*time.Millisecond, "written back")
}

// complete completes stage i of tk (the last one completes the task), saving it with cp.
func complete(t *testing.T, store *redisrepo.Store, tk *task.Task, cp *checkpoint.Checkpoint, i int, epoch uint64) {
	t.Helper()
	now := time.Now()
	require.NoError(t, tk.CompleteStage(i, now))
	if i == len(specs3)-1 {
		require.NoError(t, tk.Complete(now))
	}
	require.NoError(t, cp.Record(i, specs3[i].Name, json.RawMessage(`{}`), epoch, now))
	require.NoError(t, store.Tasks().Save(context.Background(), tk, cp))
}

// deliver sends raw request bytes straight to Redis, as a request held in the network arrives
// late, and returns the start of the reply.
func deliver(t *testing.T, addr string, req []byte) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(2*time.Second)))
	_, err = c.Write(req)
	require.NoError(t, err)
	buf := make([]byte, 256)
	n, err := c.Read(buf)
	require.NoError(t, err)
	return string(buf[:n])
}

// The same late copy after a later bump of the task (a reader's take-over, a new run): it
// raises nothing (with one token kept, the later bump's, it raised the epoch again and fenced
// out the later bump's holder).
func TestALateCopyOfAFenceBumpAfterALaterBumpRaisesNothing(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	net, store, _ := newBumpNet(t, srv)
	ctx := context.Background()
	id := net.watchNew(t, store, "late-bump-2")

	net.capture.Store(true)
	_, err := store.Tasks().BumpFence(ctx, id)
	require.NoError(t, err)
	require.NotNil(t, net.held.Load())
	later, err := store.Tasks().BumpFence(ctx, id)
	require.NoError(t, err)
	deliver(t, srv.Addr(), *net.held.Load())
	h, _ := raw(t, srv, id, false)
	assert.Equal(t, fmt.Sprint(later.Fence()), h["fence"], "a bump that landed already raises nothing twice")
}

// bumpNet is the network between an executor's store and Redis, as these tests need it: it
// drops every request while down, and keeps a copy of the next fence bump of the watched task
// once capture is set (a request held in the network, delivered later).
type bumpNet struct {
	down, capture atomic.Bool
	held          atomic.Pointer[[]byte]
	bump          atomic.Pointer[regexp.Regexp]
}

// newBumpNet starts a store that reaches srv through a bumpNet.
func newBumpNet(t *testing.T, srv *redistest.Server) (*bumpNet, *redisrepo.Store, *outage.Monitor) {
	t.Helper()
	n := &bumpNet{}
	proxy := srv.NewFaultProxy(redistest.Faults{Rule: func(chunk []byte) redistest.Fault {
		if n.down.Load() {
			return redistest.Fault{Kind: redistest.Drop}
		}
		if re := n.bump.Load(); re != nil && n.capture.Load() && re.Match(chunk) && n.capture.CompareAndSwap(true, false) {
			c := bytes.Clone(chunk) // a copy of the request stays in the network
			n.held.Store(&c)
		}
		return redistest.Fault{}
	}})
	proxy.Inject(true)
	store, mon := startStore(t, fastClient(t, proxy.Addr()), nil)
	return n, store, mon
}

// watchNew stores a plan of one task for tenant and watches the task (watch); it returns
// the task's id.
func (n *bumpNet) watchNew(t *testing.T, store *redisrepo.Store, tenant string) string {
	t.Helper()
	p, tasks := newPlan(t, tenant)
	require.NoError(t, store.CreatePlan(context.Background(), p, tasks))
	n.watch(tasks[0].ID())
	return tasks[0].ID()
}

// watch makes task id's fence bumps (bump_fence.lua's EVALSHA on its hash) the ones captured.
func (n *bumpNet) watch(id string) {
	n.bump.Store(regexp.MustCompile(`(?is)evalsha\r\n\$40\r\n[0-9a-f]{40}\r\n\$1\r\n1\r\n\$\d+\r\nexecutor:task:\{` + id + `\}\r\n`))
}
