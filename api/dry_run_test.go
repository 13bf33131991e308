package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/wire"
)

// A dry run answers a summary and one page of rendered tenants (?previewOffset=,
// ?previewLimit=), tells itself from a plan by its kind, and refuses a bad page naming the
// parameter; nothing is created.
func TestDryRunPages(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	req := wire.PlanRequest{Stages: []wire.StageRequest{{Name: "a", Kind: "noop", Params: map[string]any{"who": "{{.TenantID}}"}}}}
	for i := range 45 {
		req.Tenants = append(req.Tenants, wire.TenantRequest{ID: fmt.Sprintf("pg-%02d", i)})
	}
	body, err := json.Marshal(req)
	require.NoError(t, err)

	pages := []struct {
		name          string
		query         string
		first         string
		shown, offset int
		limit, next   int
	}{
		{"default", "", "pg-00", 20, 0, 20, 20},
		{"second page", "&previewOffset=20", "pg-20", 20, 20, 20, 40},
		{"last page", "&previewOffset=40&previewLimit=100", "pg-40", 5, 40, 100, 0},
		{"one tenant", "&previewOffset=7&previewLimit=1", "pg-07", 1, 7, 1, 8},
	}
	bad := []struct{ name, query, field string }{
		{"limit 0", "?dryRun=true&previewLimit=0", "previewLimit"},
		{"limit over 100", "?dryRun=true&previewLimit=101", "previewLimit"},
		{"negative offset", "?dryRun=true&previewOffset=-1", "previewOffset"},
		{"offset not a number", "?dryRun=true&previewOffset=x", "previewOffset"},
		{"a page without a dry run", "?previewLimit=5", "previewLimit"},
	}
	t.Run("pages", func(t *testing.T) { // returns once its parallel subtests are done
		for _, tt := range pages {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				d := decode[wire.DryRun](t, do(t, http.MethodPost, base+"/v1/plans?dryRun=true"+tt.query, body), http.StatusOK)
				assert.Equal(t, wire.KindDryRun, d.Kind)
				assert.Equal(t, wire.DryRunSummary{Tenants: 45}, d.Summary)
				require.Len(t, d.Tenants, tt.shown)
				assert.Equal(t, tt.first, d.Tenants[0].TenantID)
				assert.Equal(t, tt.first, d.Tenants[0].Stages[0].Params["who"])
				assert.Equal(t, wire.PreviewPage{Offset: tt.offset, Limit: tt.limit, NextOffset: tt.next}, d.Page)
			})
		}
		for _, tt := range bad {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				requireProblem(t, do(t, http.MethodPost, base+"/v1/plans"+tt.query, body), http.StatusBadRequest, tt.field)
			})
		}
	})
	assert.Empty(t, listPlans(t, base, "").Plans, "nothing was created")

	created := decode[wire.Plan](t, do(t, http.MethodPost, base+"/v1/plans", body), http.StatusCreated)
	assert.Equal(t, wire.KindPlan, created.Kind, "a plan tells itself from a dry run by its kind")
}
