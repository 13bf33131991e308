package redisrepo

import (
	"context"

	"github.com/executor-dev/executor/infra/memrepo"
)

// DefaultCacheTasks is Options.CacheTasks's default: about 45 MB of heap for ended 10-stage
// tasks with their checkpoints and plans (docs/performance.md, "Bounded memory").
const DefaultCacheTasks = 10_000

// newMirror makes the store's in-memory mirror, bounded by opts.CacheTasks.
func newMirror(opts Options) *memrepo.DB {
	n := opts.CacheTasks
	switch {
	case n == 0:
		n = DefaultCacheTasks
	case n < 0:
		n = 0
	}
	return memrepo.NewMirror(memrepo.MirrorOptions{CacheTasks: n, NoIndex: opts.Shared})
}

// Refresh reads plan id again from Redis if the mirror holds a copy of it that has not ended
// (best effort; not while Redis is away): told that the plan changed on another executor, the
// mirror follows, so that a plan another executor ended leaves it (but for its cache), and so
// do this executor's copies of the plan's tasks, stale since the other executor ran them.
func (r *PlanRepo) Refresh(ctx context.Context, id string) {
	if p, err := r.s.mirror.Plans().Plan(ctx, id); err == nil && !p.Status().Terminal() {
		_, _ = r.Plan(ctx, id)
	}
}
