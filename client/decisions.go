package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/executor-dev/executor/wire"
)

// ApprovePlan approves a plan's current ring, or its canary wave (POST
// /v1/plans/{planId}/approve): the rollout goes on. A plan without rings, or whose rollout
// cannot go on, is a 409 *Error.
func (c *Client) ApprovePlan(ctx context.Context, id string) (*wire.Plan, error) {
	return c.planOp(ctx, id, "approve")
}

// RejectPlan rejects a plan's current ring, or its canary wave (POST
// /v1/plans/{planId}/reject): every task not started, of this ring and the later ones, is
// cancelled; running tasks finish. With rollback (?rollback=true) every task of the rejected
// ring that ran is rolled back too, as BulkTasks with BulkRollback and the ring would: the
// tenants the ring reached are put back. The answer is the plan afterwards; it does not count
// the tasks rolled back (their statuses do). A plan without rings is a 409 *Error, or, with
// rollback, a 400 naming rollback.
func (c *Client) RejectPlan(ctx context.Context, id string, rollback bool) (*wire.Plan, error) {
	var q url.Values
	if rollback {
		q = url.Values{"rollback": {"true"}}
	}
	var out wire.Plan
	if err := c.do(ctx, request{method: http.MethodPost, path: planPath(id, "reject"), query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
