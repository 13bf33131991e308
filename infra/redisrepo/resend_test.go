package redisrepo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
)

// A write whose reply was lost may have landed. When Redis is back before the write is
// journaled (a write-back ended at that instant), the store sends it again online: it must be
// the same write, which Redis recognises as written, not a new one that conflicts with the
// first (the run then read its own write back, applied its stage completion a second time
// and stopped with "stage completed out of order", leaving its task RUNNING without a run).
func TestAWriteSentAgainAfterALostReplyIsNotAConflictWithItself(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		write func(ctx context.Context, t *testing.T, tasks *taskWrites, id string) uint64
	}{
		{"task save completing a stage", func(ctx context.Context, t *testing.T, w *taskWrites, id string) uint64 {
			tk, err := w.repo.Task(ctx, id)
			require.NoError(t, err)
			cp := checkpoint.New(id)
			require.NoError(t, tk.CompleteStage(0, time.Now()))
			require.NoError(t, cp.Record(0, specs3[0].Name, []byte(`{}`), tk.Fence(), time.Now()))
			w.arm()
			require.NoError(t, w.repo.Save(ctx, tk, cp), "the write sent again is the write that landed")
			return tk.Version()
		}},
		{"fence bump", func(ctx context.Context, t *testing.T, w *taskWrites, id string) uint64 {
			before, err := w.repo.Task(ctx, id)
			require.NoError(t, err)
			w.arm()
			tk, err := w.repo.BumpFence(ctx, id)
			require.NoError(t, err)
			require.Equal(t, before.Fence()+1, tk.Fence(), "one bump, however often it was sent")
			return tk.Version()
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			var armed, lost atomic.Bool
			proxy := srv.NewFaultProxy(redistest.Faults{Rule: func(chunk []byte) redistest.Fault {
				if armed.Load() && bytes.Contains(bytes.ToLower(chunk), []byte("evalsha")) && armed.CompareAndSwap(true, false) {
					lost.Store(true)
					return redistest.Fault{Kind: redistest.LoseReply} // Redis applies it; the reply is lost
				}
				return redistest.Fault{}
			}})
			proxy.Inject(true)
			store, mon := startStore(t, fastClient(t, proxy.Addr()), nil)
			store.AfterOnlineFailure(mon.Recover) // Redis is back at once: the write is sent again online
			ctx := context.Background()
			id := startedTask(t, store, "resend").ID()

			w := &taskWrites{repo: store.Tasks(), arm: func() { armed.Store(true) }}
			version := tc.write(ctx, t, w, id)
			require.True(t, lost.Load(), "the write's reply was lost")
			d, _ := mon.Degraded()
			require.False(t, d, "the write went online again, not to the journal")

			fresh := redisrepo.New(srv.Client(), redisrepo.Options{}) // reads Redis alone
			got, err := fresh.Tasks().Task(ctx, id)
			require.NoError(t, err)
			require.Equal(t, version, got.Version(), "Redis holds the write once")
			require.Equal(t, task.Running, got.Status())
		})
	}
}

// taskWrites is what a case writes through, and how it arms the lost reply.
type taskWrites struct {
	repo interface {
		Task(ctx context.Context, id string) (*task.Task, error)
		Save(ctx context.Context, t *task.Task, cp *checkpoint.Checkpoint) error
		BumpFence(ctx context.Context, id string) (*task.Task, error)
	}
	arm func()
}

// A write Redis applied but whose reply never came (StallReply: the client waits for its read
// timeout) may be read back meanwhile through another connection, here a tenant query. The
// store then finds Redis away and makes the write on its mirror: it must be the write's own
// outcome that moves the mirror, not the read's, or the mirror's compare-and-set fails as a
// conflict with the write itself (the run then re-applies its stage completion to its own
// change read back, and stops with "stage completed out of order", its task RUNNING without
// a run). The next stage's write and the write-back go on from the write as made.
func TestAWriteReadBackBeforeItsReplyIsLostIsNotAConflictWithItself(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var armed atomic.Bool
	proxy := srv.NewFaultProxy(redistest.Faults{Rule: func(chunk []byte) redistest.Fault {
		if bytes.Contains(bytes.ToLower(chunk), []byte("evalsha")) && armed.CompareAndSwap(true, false) {
			return redistest.Fault{Kind: redistest.StallReply}
		}
		return redistest.Fault{}
	}})
	proxy.Inject(true)
	c := redis.NewClient(&redis.Options{Addr: proxy.Addr(), ReadTimeout: 2 * time.Second, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	store, mon := startStore(t, c, nil)
	ctx := context.Background()
	tk := startedTask(t, store, "readback")
	id, before := tk.ID(), tk.Version()

	// The read: as soon as Redis holds the write, while its writer still waits for the reply.
	readBack := make(chan uint64, 1)
	go func() {
		defer close(readBack)
		for range 400 {
			v, err := srv.Client().HGet(ctx, rediskey.New("").Task(id), "version").Uint64()
			if err == nil && v == before+1 {
				got, err := store.Tasks().Task(ctx, id)
				if err == nil {
					readBack <- got.Version()
				}
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	cp := checkpoint.New(id)
	require.NoError(t, tk.CompleteStage(0, time.Now()))
	require.NoError(t, cp.Record(0, specs3[0].Name, json.RawMessage(`{}`), tk.Fence(), time.Now()))
	armed.Store(true)
	err := store.Tasks().Save(ctx, tk, cp)
	require.Equal(t, before+1, <-readBack, "the read saw the write before its writer learnt anything")
	require.NoError(t, err, "the write made on the mirror is the write Redis holds, not a conflict with it")
	require.Equal(t, before+1, tk.Version())

	require.NoError(t, tk.CompleteStage(1, time.Now()))
	require.NoError(t, cp.Record(1, specs3[1].Name, json.RawMessage(`{}`), tk.Fence(), time.Now()))
	require.NoError(t, store.Tasks().Save(ctx, tk, cp), "the next stage goes on from it")
	require.Eventually(t, func() bool { d, _ := mon.Degraded(); return !d && store.JournalLen() == 0 },
		10*time.Second, 20*time.Millisecond, "written back")

	fresh := redisrepo.New(srv.Client(), redisrepo.Options{}) // reads Redis alone
	got, err := fresh.Tasks().Task(ctx, id)
	require.NoError(t, err)
	require.Equal(t, before+2, got.Version())
	require.Equal(t, 2, got.CurrentStage())
	gotCp, err := fresh.Checkpoints().Checkpoint(ctx, id)
	require.NoError(t, err)
	require.Equal(t, 1, gotCp.LastCompletedStageIndex(), "the checkpoint has both stages")
}

// startedTask creates a plan for tenant in store and starts its task (a fence bump, then the
// RUNNING write), as a run does.
func startedTask(t *testing.T, store *redisrepo.Store, tenant string) *task.Task {
	t.Helper()
	ctx := context.Background()
	p, tasks := newPlan(t, tenant)
	require.NoError(t, store.CreatePlan(ctx, p, tasks))
	tk, err := store.Tasks().BumpFence(ctx, tasks[0].ID())
	require.NoError(t, err)
	require.NoError(t, tk.Start(tk.Fence(), time.Now()))
	require.NoError(t, store.Tasks().Save(ctx, tk, nil))
	return tk
}
