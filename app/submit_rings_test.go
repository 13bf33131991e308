package app_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
)

// ringsRequest is a 40-tenant sleep plan in rings 1 / 25 % / rest, shuffled without a seed,
// with rt-07 pinned to the rest.
func ringsRequest() app.SubmitRequest {
	req := sleepPlan()
	for i := range 40 {
		req.Tenants = append(req.Tenants, app.TenantInput{ID: fmt.Sprintf("rt-%02d", i)})
	}
	req.Tenants[7].Wave = "rest"
	req.Rollout = plan.Rollout{Order: plan.OrderShuffle, Waves: []plan.Wave{
		{Size: plan.Share{Count: 1}}, {Size: plan.Share{Percent: 25}}, {Name: "rest", Rest: true},
	}}
	return req
}

// A submission's rings: the defaults filled in (names, then, a seed derived from the tenant
// ids), the same rings for the same request, the pin honoured, the plan's tasks in ring order.
func TestSubmitDealsTheTenantsIntoRings(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := context.Background()
	dry := ringsRequest()
	dry.DryRun = true
	first, err := svc.Submit(ctx, dry)
	require.NoError(t, err)
	again, err := svc.Submit(ctx, dry)
	require.NoError(t, err)
	require.Len(t, first.Rings, 3)
	assert.Equal(t, first.Rings, again.Rings, "the same request, the same rings")
	assert.Equal(t, []string{"wave-1", "wave-2", "rest"}, []string{first.Rings[0].Wave, first.Rings[1].Wave, first.Rings[2].Wave})
	assert.Len(t, first.Rings[0].Tenants, 1)
	assert.Len(t, first.Rings[1].Tenants, 10)
	assert.Len(t, first.Rings[2].Tenants, 29)
	assert.Equal(t, "rt-07", first.Rings[2].Tenants[0], "a pinned tenant comes first in its ring")
	var inOrder []string // the first two rings in submission order
	for i := range 11 {
		inOrder = append(inOrder, fmt.Sprintf("rt-%02d", i))
	}
	assert.NotEqual(t, inOrder, append(append([]string{}, first.Rings[0].Tenants...), first.Rings[1].Tenants...), "shuffled")

	sub, err := svc.Submit(ctx, ringsRequest())
	require.NoError(t, err)
	p := sub.Plan.Plan
	r := p.Rollout()
	assert.NotZero(t, r.Seed, "a seed derived from the tenant ids is recorded")
	assert.Equal(t, plan.ThenAuto, r.Waves[0].Then)
	assert.Equal(t, []int{0, 1, 11, 40}, r.Bounds)
	for k, ring := range first.Rings {
		for i, id := range p.RingTaskIDs(k) {
			v, err := svc.Task(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, ring.Tenants[i], v.Task.TenantID(), "ring %d, task %d: the plan's tasks are in ring order", k, i)
		}
	}
}

// A tenant pinned to a wave that does not exist, or to a plan without waves, is refused naming
// the tenant's field; nothing is created.
func TestSubmitRefusesABadPin(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := context.Background()
	req := ringsRequest()
	req.Tenants[3].Wave = "nope"
	_, err := svc.Submit(ctx, req)
	var ve *app.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "tenants[3].wave", ve.Violations[0].Field)

	plain := sleepPlan("pa-1")
	plain.Tenants[0].Wave = "rest"
	_, err = svc.Submit(ctx, plain)
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "tenants[0].wave", ve.Violations[0].Field)
	assert.Zero(t, countPlans(t, svc), "nothing was created")
}
