package api_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/executor-dev/executor/wire"
)

func TestListPlansByLabels(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	labelled := func(name string, labels map[string]string) wire.Plan {
		return submit(t, base, wire.PlanRequest{Name: name, Labels: labels, Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("lb-" + name)})
	}
	prod := labelled("prod", map[string]string{"team": "sre", "env": "prod"})
	core := labelled("core", map[string]string{"team": "core"})
	dev := labelled("dev", map[string]string{"team": "sre", "env": "dev"})
	labelled("none", nil)

	tests := []struct {
		name       string
		query      string
		want       []string
		nextCursor string
	}{
		{"one label", "?label=team=sre", []string{dev.PlanID, prod.PlanID}, ""},
		{"every label must match", "?label=team=sre&label=env=prod", []string{prod.PlanID}, ""},
		{"escaped", "?label=" + url.QueryEscape("team=core"), []string{core.PlanID}, ""},
		{"no plan has it", "?label=team=web", []string{}, ""},
		{"an empty value matches an empty label only", "?label=team=", []string{}, ""},
		{"labels and paging", "?label=team=sre&limit=1", []string{dev.PlanID}, dev.PlanID},
		{"labels and cursor", "?label=team=sre&cursor=" + dev.PlanID, []string{prod.PlanID}, ""},
		{"labels and status", "?label=team=sre&status=PAUSED", []string{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			page := listPlans(t, base, tc.query)
			assert.Equal(t, tc.want, planIDs(page.Plans))
			assert.Equal(t, tc.nextCursor, page.NextCursor)
		})
	}

	bad := []struct {
		name  string
		query string
	}{
		{"no =", "?label=team"},
		{"empty key", "?label==sre"},
		{"a key that is not a label key", "?label=" + url.QueryEscape("te am=sre")},
		{"a key given twice", "?label=team=sre&label=team=core"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			requireProblem(t, get(t, base+"/v1/plans"+tc.query), http.StatusBadRequest, "label")
		})
	}
}
