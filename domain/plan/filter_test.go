package plan_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

func TestFilterMatches(t *testing.T) {
	t.Parallel()
	p, err := plan.New(plan.Draft{
		ID:      "01JD0000000000000000000000",
		Name:    "rollout",
		Labels:  map[string]string{"team": "sre", "env": "prod"},
		Stages:  []stage.Spec{{Name: "a", Kind: "noop"}},
		TaskIDs: []string{"01JD0000000000000000000001"}, MaxConcurrency: 1,
	}, time.Now())
	require.NoError(t, err)
	tests := []struct {
		name   string
		filter plan.Filter
		want   bool
	}{
		{"no filter", plan.Filter{}, true},
		{"its status", plan.Filter{Status: p.Status()}, true},
		{"another status", plan.Filter{Status: plan.Completed}, false},
		{"one of its labels", plan.Filter{Labels: map[string]string{"team": "sre"}}, true},
		{"all of its labels", plan.Filter{Labels: map[string]string{"team": "sre", "env": "prod"}}, true},
		{"a label with another value", plan.Filter{Labels: map[string]string{"team": "core"}}, false},
		{"a label it does not have", plan.Filter{Labels: map[string]string{"team": "sre", "tier": "1"}}, false},
		{"an empty value is not a missing label", plan.Filter{Labels: map[string]string{"tier": ""}}, false},
		{"labels and another status", plan.Filter{Status: plan.Completed, Labels: map[string]string{"team": "sre"}}, false},
		{"labels and its status", plan.Filter{Status: p.Status(), Labels: map[string]string{"env": "prod"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.filter.Matches(p))
		})
	}
}
