package redisrepo_test

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/task"
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
			p, tasks := newPlan(t, "resend")
			require.NoError(t, store.CreatePlan(ctx, p, tasks))
			id := tasks[0].ID()
			tk, err := store.Tasks().BumpFence(ctx, id)
			require.NoError(t, err)
			require.NoError(t, tk.Start(tk.Fence(), time.Now()))
			require.NoError(t, store.Tasks().Save(ctx, tk, nil))

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
