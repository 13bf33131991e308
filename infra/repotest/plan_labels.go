package repotest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/plan"
)

// The label part of the plan listing's contract: a filter's labels select the plans that have
// every one of them (a plan may have more), alone or with a status and a cursor; Scan bounds
// the plans a listing examines and Resume says where it stopped.

// labelTests are the label cases of the contract, run by Run.
var labelTests = []struct {
	name string
	fn   func(t *testing.T, s Store)
}{
	{"Plan/ListByLabels", testPlanListByLabels},
	{"Plan/ListScanBound", testPlanListScanBound},
}

// createLabelled creates six plans, oldest first, with these labels: ids[0] team=sre,env=prod;
// ids[1] team=core; ids[2] team=sre; ids[3] none; ids[4] team=sre,env=dev; ids[5] team=sre,
// env=prod, RUNNING.
func createLabelled(t *testing.T, s Store) []string {
	t.Helper()
	labels := []map[string]string{
		{"team": "sre", "env": "prod"}, {"team": "core"}, {"team": "sre"}, nil,
		{"team": "sre", "env": "dev"}, {"team": "sre", "env": "prod"},
	}
	ids := make([]string, len(labels))
	for i, l := range labels {
		p := newPlanLabelled(t, l, at(i))
		require.NoError(t, s.Plans.Create(t.Context(), p))
		if i == 5 {
			require.NoError(t, p.Start(at(i)))
			require.NoError(t, s.Plans.Save(t.Context(), p))
		}
		ids[i] = p.ID()
	}
	return ids
}

// newPlanLabelled is newPlan with these labels.
func newPlanLabelled(t *testing.T, labels map[string]string, now time.Time) *plan.Plan {
	t.Helper()
	st := newPlan(t, "", now).State()
	st.Labels = labels
	p, err := plan.Load(st)
	require.NoError(t, err)
	return p
}

func testPlanListByLabels(t *testing.T, s Store) {
	ids := createLabelled(t, s)
	sre := map[string]string{"team": "sre"}
	prod := map[string]string{"team": "sre", "env": "prod"}
	tests := []struct {
		name   string
		filter plan.Filter
		want   []string
	}{
		{"one label", plan.Filter{Labels: sre}, []string{ids[5], ids[4], ids[2], ids[0]}},
		{"every label must match", plan.Filter{Labels: prod}, []string{ids[5], ids[0]}},
		{"another value", plan.Filter{Labels: map[string]string{"team": "core"}}, []string{ids[1]}},
		{"a label no plan has", plan.Filter{Labels: map[string]string{"tier": "1"}}, nil},
		{"labels and limit", plan.Filter{Labels: sre, Limit: 2}, []string{ids[5], ids[4]}},
		{"labels and before", plan.Filter{Labels: sre, Before: ids[4]}, []string{ids[2], ids[0]}},
		{"labels and status", plan.Filter{Labels: prod, Status: plan.Running}, []string{ids[5]}},
		{"labels and another status", plan.Filter{Labels: map[string]string{"team": "core"}, Status: plan.Running}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Plans.List(t.Context(), tt.filter)
			require.NoError(t, err)
			if tt.want == nil {
				assert.Empty(t, got)
				return
			}
			assert.Equal(t, tt.want, planIDs(got))
			for _, p := range got {
				assert.True(t, tt.filter.Matches(p), "plan %s listed but does not match", p.ID())
			}
		})
	}
}

func testPlanListScanBound(t *testing.T, s Store) {
	ids := createLabelled(t, s)
	core := map[string]string{"team": "core"}
	tests := []struct {
		name       string
		filter     plan.Filter
		want       []string
		wantResume string // "": Resume left alone
	}{
		{"stops after Scan plans", plan.Filter{Labels: core, Scan: 3}, nil, ids[3]},
		{"finds a match within Scan", plan.Filter{Labels: core, Scan: 5}, []string{ids[1]}, ids[1]},
		{"scan from the cursor", plan.Filter{Labels: core, Before: ids[3], Scan: 2}, []string{ids[1]}, ids[1]},
		{"the limit comes first", plan.Filter{Labels: map[string]string{"team": "sre"}, Limit: 2, Scan: 2}, []string{ids[5], ids[4]}, ""},
		{"no plan left after the scan", plan.Filter{Labels: core, Scan: 6}, []string{ids[1]}, ""},
		{"Scan larger than the store", plan.Filter{Labels: core, Scan: 100}, []string{ids[1]}, ""},
		{"no bound", plan.Filter{Labels: core}, []string{ids[1]}, ""},
		{"a bound without a filter", plan.Filter{Scan: 2}, []string{ids[5], ids[4]}, ids[4]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resume := ""
			f := tt.filter
			f.Resume = &resume
			got, err := s.Plans.List(t.Context(), f)
			require.NoError(t, err)
			assert.Equal(t, tt.want, nilIfEmpty(planIDs(got)))
			assert.Equal(t, tt.wantResume, resume)
		})
	}

	t.Run("following Resume lists every match once", func(t *testing.T) {
		var seen []string
		before := ""
		for page := 0; ; page++ {
			require.Less(t, page, 10, "paging must end")
			resume := ""
			got, err := s.Plans.List(t.Context(), plan.Filter{Labels: map[string]string{"team": "sre"}, Before: before, Limit: 10, Scan: 2, Resume: &resume})
			require.NoError(t, err)
			seen = append(seen, planIDs(got)...)
			if resume == "" {
				break
			}
			before = resume
		}
		assert.Equal(t, []string{ids[5], ids[4], ids[2], ids[0]}, seen)
	})
}

// nilIfEmpty is ids, or nil when there are none.
func nilIfEmpty(ids []string) []string {
	if len(ids) == 0 {
		return nil
	}
	return ids
}
