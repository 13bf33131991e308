package app_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/stage"
)

func TestSubmitEnforcesLimitsNamingTheField(t *testing.T) {
	t.Parallel()
	limits := app.Limits{MaxTenants: 3, MaxStages: 2, MaxParamsBytes: 100, MaxQueued: 1000}
	big := strings.Repeat("x", 100)
	tests := []struct {
		name   string
		limits app.Limits
		mutate func(*app.SubmitRequest)
		field  string
	}{
		{"too many tenants", limits, func(r *app.SubmitRequest) { *r = numberedPlan("many", 4) }, "tenants"},
		{"more tenants than the queue holds", app.Limits{MaxQueued: 2}, func(r *app.SubmitRequest) { *r = numberedPlan("q", 3) }, "tenants"},
		{"too many tenants by default", app.Limits{}, func(r *app.SubmitRequest) {
			*r = numberedPlan("default", app.DefaultMaxTenants+1)
		}, "tenants"},
		{"too many stages", limits, func(r *app.SubmitRequest) {
			for _, n := range []string{"b", "c"} {
				r.Stages = append(r.Stages, stage.Spec{Name: n, Kind: "noop"})
			}
		}, "stages"},
		{"stage params too large together", limits, func(r *app.SubmitRequest) {
			r.Stages = append(r.Stages, stage.Spec{Name: "b", Kind: "noop", Params: map[string]any{"p": big[:90]}})
		}, "stages"},
		{"stage params not JSON", limits, func(r *app.SubmitRequest) {
			r.Stages[0].Params["bad"] = make(chan int)
		}, "stages[0].params"},
		{"tenant params too large", limits, func(r *app.SubmitRequest) {
			r.Tenants[1].Params = map[string]any{"p": big}
		}, "tenants[1].params"},
		{"tenant params not JSON", limits, func(r *app.SubmitRequest) {
			r.Tenants[0].Params = map[string]any{"f": func() {}}
		}, "tenants[0].params"},
		{"too many labels", app.Limits{MaxLabels: 2}, func(r *app.SubmitRequest) {
			r.Labels = map[string]string{"a": "1", "b": "2", "c": "3"}
		}, "labels"},
		{"a label value too large", app.Limits{MaxLabelValueBytes: 4}, func(r *app.SubmitRequest) {
			r.Labels = map[string]string{"team": "12345"}
		}, "labels.team"},
		{"every tenant's ranges together", app.Limits{MaxRenderSteps: 15}, func(r *app.SubmitRequest) {
			r.Stages[0].Params = map[string]any{"x": "{{range 10}}.{{end}}"} // 10 per tenant, 2 tenants
		}, "stages[0].params.x"},
		{"every tenant's writes together", app.Limits{MaxRenderBytes: 150}, func(r *app.SubmitRequest) {
			r.Stages[0].Params = map[string]any{"x": big} // 100 bytes per tenant, 2 tenants
		}, "stages[0].params.x"},
	}
	for _, tc := range tests {
		for _, dryRun := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s dryRun=%t", tc.name, dryRun), func(t *testing.T) {
				t.Parallel()
				svc, _ := busyService(t, 0, 64, tc.limits)
				req := numberedPlan("lim", 2)
				tc.mutate(&req)
				req.DryRun = dryRun
				_, err := svc.Submit(context.Background(), req)
				require.ErrorIs(t, err, app.ErrInvalidInput)
				var ve *app.ValidationError
				require.ErrorAs(t, err, &ve)
				assert.Equal(t, tc.field, ve.Violations[0].Field, "violations: %+v", ve.Violations)
				assert.Equal(t, 0, countPlans(t, svc), "nothing was created")
			})
		}
	}
}

func TestSubmitAcceptsAPlanAtEveryLimit(t *testing.T) {
	t.Parallel()
	svc, _ := busyService(t, 0, 64, app.Limits{MaxTenants: 3, MaxStages: 2, MaxParamsBytes: 40, MaxQueued: 3})
	req := numberedPlan("edge", 3)
	req.Stages = append(req.Stages, stage.Spec{Name: "b", Kind: "noop"})
	req.Tenants[0].Params = map[string]any{"p": strings.Repeat("x", 32)} // {"p":"xx…"}: 40 bytes
	_, err := svc.Submit(context.Background(), req)
	require.NoError(t, err)
}
