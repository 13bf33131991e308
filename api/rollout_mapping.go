package api

import (
	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/lease"
	"github.com/executor-dev/executor/wire"
)

// PlanRetryFrom maps a bulk retry to its wire form. Retried and Skipped are never nil.
func PlanRetryFrom(r app.PlanRetry) wire.PlanRetry {
	return wire.PlanRetry{Plan: PlanFrom(r.Plan), Retried: taskRefs(r.Retried), Skipped: taskRefs(r.Skipped)}
}

func taskRefs(refs []app.TaskRef) []wire.TaskRef {
	out := make([]wire.TaskRef, len(refs))
	for i, r := range refs {
		out[i] = wire.TaskRef{TaskID: r.TaskID, TenantID: r.TenantID, Reason: r.Reason}
	}
	return out
}

// TenantLockFrom maps a tenant's lease to its wire form.
func TenantLockFrom(v app.LockView) wire.TenantLock {
	out := wire.TenantLock{TenantID: v.TenantID, Held: v.Held, TaskID: v.TaskID, PlanID: v.PlanID, Epoch: v.Epoch}
	if v.Held {
		out.Owner, out.TTLMs = v.Holder.Owner, v.Holder.TTL.Milliseconds()
	}
	return out
}

// TenantUnlockFrom maps what an unlock did to its wire form.
func TenantUnlockFrom(u lease.Unlocked) wire.TenantUnlock {
	out := wire.TenantUnlock{TenantID: u.TenantID, Released: u.Released, TaskID: u.TaskID, Epoch: u.Epoch, Interrupted: u.Interrupted}
	if u.Released {
		out.PreviousOwner = u.Previous.Owner
	}
	return out
}
