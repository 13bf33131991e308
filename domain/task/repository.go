package task

import (
	"context"

	"github.com/executor-dev/executor/domain/checkpoint"
)

// Repository stores tasks and the tenant → latest task index.
type Repository interface {
	// Create stores new tasks and points each tenant's index at its task, as one step against
	// every other creator (other processes included): when a tenant's latest task has not
	// ended it creates nothing and returns a *BusyError listing those tenants.
	Create(ctx context.Context, tasks []*Task) error
	// Reactivate makes t, about to run again (retry or resume), its tenant's active task once
	// more; it fails with a *BusyError when the tenant moved on to another task meanwhile.
	Reactivate(ctx context.Context, t *Task) error
	// Task returns the task with id, or ErrNotFound.
	Task(ctx context.Context, id string) (*Task, error)
	// Latest returns the tenant's latest task, or ErrNotFound.
	Latest(ctx context.Context, tenantID string) (*Task, error)
	// LatestWithCheckpoint returns the tenant's latest task and its checkpoint (nil when it
	// has none), or ErrNotFound: what Latest and then checkpoint.Store.Checkpoint would read,
	// read together (a tenant query waits for fewer round trips).
	LatestWithCheckpoint(ctx context.Context, tenantID string) (*Task, *checkpoint.Checkpoint, error)
	// Peek returns the task with id as a local copy holds it, when the store keeps one (a
	// copy that may be stale), else as Task does; ErrNotFound when neither has it. A caller
	// acts on what it read only after the store confirmed it: the orchestrator's claim reads
	// a queued task through it, and the fence bump that starts the run returns the task as
	// stored.
	Peek(ctx context.Context, id string) (*Task, error)
	// ByIDs returns the tasks with the given ids, in that order (ErrNotFound if one is missing).
	ByIDs(ctx context.Context, ids []string) ([]*Task, error)
	// Statuses returns the statuses of the tasks with the given ids, in that order
	// (ErrNotFound if one is missing): what counting a plan's progress or settling it needs,
	// without reading and decoding whole tasks.
	Statuses(ctx context.Context, ids []string) ([]Status, error)
	// Save writes t and, when cp is not nil, its checkpoint, as one atomic compare-and-set:
	// it returns ErrFenced, writing nothing, when the stored task carries a newer fence epoch
	// than t, and ErrConflict, writing nothing, when the stored task is no longer at t's
	// Version (another writer changed it since t was read). On success t carries the new
	// version (Stored), so its owner can write it again.
	Save(ctx context.Context, t *Task, cp *checkpoint.Checkpoint) error
	// Update applies fn to the task as stored and saves the result with the checkpoint fn
	// returns, if any (Save). When another writer got there first it reads the task again and
	// applies fn again, so fn must be a transition of the task it is given and nothing else:
	// in particular fn must not call the repository (a store may hold a lock around fn: the
	// Redis store's journal while Redis is away). It returns the task as saved, or fn's error (nothing written), ErrNotFound, or
	// ErrConflict after many lost races in a row.
	Update(ctx context.Context, id string, fn func(t *Task) (*checkpoint.Checkpoint, error)) (*Task, error)
	// BumpFence raises the stored task's fence epoch by one, atomically, and returns the task
	// as stored with it (Fence() is the new epoch): the epoch of a new run that has just taken
	// the tenant's lease, or of a reader taking over a task whose owner is gone. From then on
	// every write carrying an older epoch is refused; the returned task is never a stale copy.
	BumpFence(ctx context.Context, id string) (*Task, error)
}
