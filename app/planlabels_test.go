package app_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
)

// listings records the filters its store's List is given.
type listings struct {
	plan.Repository
	mu      sync.Mutex
	filters []plan.Filter
}

func (l *listings) List(ctx context.Context, f plan.Filter) ([]*plan.Plan, error) {
	l.mu.Lock()
	l.filters = append(l.filters, f)
	l.mu.Unlock()
	return l.Repository.List(ctx, f)
}

func (l *listings) last() plan.Filter {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.filters[len(l.filters)-1]
}

// A listing by labels checks the selector's keys, and examines at most MaxPlanScan plans; one
// by status alone has no such bound.
func TestListPlansByLabels(t *testing.T) {
	t.Parallel()
	db := memrepo.New()
	rec := &listings{Repository: db.Plans()}
	svc, _ := apptest.New(t, apptest.Stores{Creator: db, Plans: rec, Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Locker: lock.NewMemory()},
		nil, orchestrator.Config{})
	ctx := context.Background()
	req := sleepPlan("lab-1")
	req.Labels = map[string]string{"team": "sre"}
	sub, err := svc.Submit(ctx, req)
	require.NoError(t, err)
	_, err = svc.Submit(ctx, sleepPlan("lab-2"))
	require.NoError(t, err)

	got, err := svc.ListPlans(ctx, plan.Filter{Labels: map[string]string{"team": "sre"}})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, sub.Plan.Plan.ID(), got[0].Plan.ID())
	assert.Equal(t, app.MaxPlanScan, rec.last().Scan, "a page by labels is bounded")

	_, err = svc.ListPlans(ctx, plan.Filter{Labels: map[string]string{"team": "sre"}, Scan: 10 * app.MaxPlanScan})
	require.NoError(t, err)
	assert.Equal(t, app.MaxPlanScan, rec.last().Scan, "a caller cannot lift the bound")

	_, err = svc.ListPlans(ctx, plan.Filter{Status: plan.Running})
	require.NoError(t, err)
	assert.Zero(t, rec.last().Scan, "a page by status alone reads until it is full")

	tooMany := map[string]string{}
	for i := range app.DefaultMaxLabels + 1 {
		tooMany[fmt.Sprintf("k%d", i)] = "v"
	}
	bad := []struct {
		name   string
		labels map[string]string
	}{
		{"a key with a space", map[string]string{"te am": "sre"}},
		{"an empty key", map[string]string{"": "sre"}},
		{"a key too long", map[string]string{strings.Repeat("k", 64): "x"}},
		{"more labels than a plan has", tooMany},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := svc.ListPlans(ctx, plan.Filter{Labels: tt.labels})
			require.ErrorIs(t, err, app.ErrInvalidInput)
			var ve *app.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, "label", ve.Violations[0].Field)
		})
	}
}
