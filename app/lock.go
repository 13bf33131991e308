package app

import (
	"context"
	"errors"
	"strconv"

	"github.com/executor-dev/executor/domain/audit"
	"github.com/executor-dev/executor/domain/task"

	"github.com/executor-dev/executor/domain/lease"
)

// LockView is a tenant's lease as it stands, with the fence epoch of its latest task: a run
// whose writes carry an older epoch is refused.
type LockView struct {
	TenantID string
	Held     bool
	Holder   lease.Holder // owner <planId>:<taskId>@<executor> and TTL left, when Held
	TaskID   string       // the tenant's latest task
	PlanID   string
	Epoch    uint64
}

// TenantLock returns the tenant's lease: who holds it, for how long yet, and the fence epoch
// of its latest task. A tenant without a task is task.ErrNotFound.
func (s *Service) TenantLock(ctx context.Context, tenantID string) (LockView, error) {
	if err := checkTenantID("tenantId", tenantID); err != nil {
		return LockView{}, err
	}
	if err := s.refuseRead(); err != nil {
		return LockView{}, err
	}
	t, err := s.tasks.Latest(ctx, tenantID)
	if err != nil {
		return LockView{}, err
	}
	h, held, err := s.holders.Holder(ctx, tenantID)
	if err != nil {
		return LockView{}, err
	}
	return LockView{TenantID: tenantID, Held: held, Holder: h, TaskID: t.ID(), PlanID: t.PlanID(), Epoch: t.Fence()}, nil
}

// UnlockTenant removes the tenant's lease whoever holds it and fences the holder (see
// orchestrator.Unlock): its RUNNING task becomes INTERRUPTED.
func (s *Service) UnlockTenant(ctx context.Context, tenantID string) (lease.Unlocked, error) {
	if err := checkTenantID("tenantId", tenantID); err != nil {
		return lease.Unlocked{}, err
	}
	a := action{name: "unlock", tenant: tenantID}
	switch t, err := s.tasks.Latest(ctx, tenantID); {
	case err == nil:
		a.planID, a.taskID = t.PlanID(), t.ID()
	case !errors.Is(err, task.ErrNotFound):
		return lease.Unlocked{}, err
	}
	var u lease.Unlocked
	err := s.audited(ctx, a, func(ctx context.Context) (_ []audit.Attr, err error) {
		if u, err = s.unlocker.Unlock(ctx, tenantID); err != nil {
			return nil, err
		}
		out := []audit.Attr{attr("released", strconv.FormatBool(u.Released))}
		if u.Released {
			out = append(out, attr("previousOwner", u.Previous.Owner))
		}
		if u.TaskID != "" {
			out = append(out, attr("epoch", strconv.FormatUint(u.Epoch, 10)),
				attr("interrupted", strconv.FormatBool(u.Interrupted)))
		}
		return out, nil
	})
	return u, err
}
