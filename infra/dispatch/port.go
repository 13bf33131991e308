package dispatch

import (
	"context"
	"time"

	"github.com/executor-dev/executor/orchestrator"
)

// queue is what Memory and Redis both do.
type queue interface {
	Push(ctx context.Context, planID string, lim Limits, ids []string) error
	Return(ctx context.Context, planID, taskID string) error
	Claim(ctx context.Context, planID, executor string) (string, time.Duration, error)
	ClaimN(ctx context.Context, planID, executor string, n int) ([]string, time.Duration, error)
	Done(ctx context.Context, planID, taskID string, failed bool) ([]string, int, error)
	DoneClaim(ctx context.Context, planID, taskID string, failed bool, executor string) ([]string, int, string, error)
	SetPaused(ctx context.Context, planID string, paused bool) error
	Remove(ctx context.Context, planID string, ids []string) ([]string, error)
	Drain(ctx context.Context, planID string) ([]string, error)
	Release(ctx context.Context, planID, taskID string) (bool, error)
	InFlight(ctx context.Context, planID string) (map[string]InFlight, error)
	Len(ctx context.Context, planID string) (int, int, error)
	Plans(ctx context.Context) ([]string, error)
	Close(ctx context.Context, planID string) error
	Woken() <-chan struct{}
}

var (
	_ queue = (*Memory)(nil)
	_ queue = (*Redis)(nil)
)

// Port is a dispatch queue as the orchestrator's Queue.
type Port struct {
	queue
	shared bool
}

var _ orchestrator.Queue = Port{}

// ForMemory returns m as the orchestrator's Queue: one process's.
func ForMemory(m *Memory) Port { return Port{queue: m} }

// ForRedis returns r as the orchestrator's Queue: shared by every executor on its Redis.
func ForRedis(r *Redis) Port { return Port{queue: r, shared: true} }

// Push is Queue.Push.
func (p Port) Push(ctx context.Context, planID string, lim orchestrator.Limits, ids []string) error {
	return p.queue.Push(ctx, planID, Limits(lim), ids)
}

// InFlight is Queue.InFlight.
func (p Port) InFlight(ctx context.Context, planID string) (map[string]orchestrator.Claimed, error) {
	in, err := p.queue.InFlight(ctx, planID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]orchestrator.Claimed, len(in))
	for id, c := range in {
		out[id] = orchestrator.Claimed(c)
	}
	return out, nil
}

// Shared is Queue.Shared: whether the queue outlives this process.
func (p Port) Shared() bool { return p.shared }
