package client

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/executor-dev/executor/wire"
)

// PlanQuery selects a page of plans (GET /v1/plans). Every field is optional.
type PlanQuery struct {
	Status string // a plan status
	// Labels selects the plans that have every one of these labels with this value (?label=key=value, once
	// per label). A page by labels examines a bounded number of plans: it may hold fewer than
	// Limit plans, or none, and still have a NextCursor.
	Labels map[string]string
	Limit  int    // plans per page; 0: the server's default
	Cursor string // the NextCursor of the previous page
}

// ListPlans lists plans newest first (GET /v1/plans), one page: those q selects. The page's
// NextCursor, when set, is the Cursor of the next.
func (c *Client) ListPlans(ctx context.Context, q PlanQuery) (*wire.PlanList, error) {
	v := url.Values{}
	if q.Status != "" {
		v.Set("status", q.Status)
	}
	for _, k := range slices.Sorted(maps.Keys(q.Labels)) {
		v.Add("label", k+"="+q.Labels[k])
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	var out wire.PlanList
	if err := c.do(ctx, request{method: http.MethodGet, path: "/v1/plans", query: v}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
