package client

import (
	"context"

	"github.com/executor-dev/executor/wire"
)

// RollbackTenant rolls the tenant's latest task back (POST /v1/tenants/{tenantId}/rollback): a
// new run, its attempt up by one, that undoes the stages the task completed, newest first,
// each with its stage's undo; a task whose rollback stopped (ROLLBACK_FAILED, or paused,
// cancelled or interrupted while rolling back) goes on from the stages still applied. The task
// must have run and stopped (a status whose rule is undoable: COMPLETED, FAILED, CANCELLED,
// PAUSED, INTERRUPTED, ROLLBACK_FAILED); any other is a 409 *Error. Its plan reopens if it had
// ended. BulkTasks with BulkRollback rolls back a plan's tasks matching a filter.
func (c *Client) RollbackTenant(ctx context.Context, tenant string) (*wire.Task, error) {
	return c.tenantOp(ctx, tenant, "rollback")
}
