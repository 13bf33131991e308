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

// The templates of a submission are rendered for every tenant within a budget for the whole
// plan, and stop with the request: a template that fits each tenant's bound but not the
// plan's, or a client that went away, gets a 400 and nothing is created.
func TestSubmissionRenderingIsBounded(t *testing.T) {
	t.Parallel()
	tenants := func(n int) []app.TenantInput {
		out := make([]app.TenantInput, n)
		for i := range out {
			out[i] = app.TenantInput{ID: fmt.Sprintf("rb-%03d", i)}
		}
		return out
	}
	busy := func(steps int) []stage.Spec {
		return []stage.Spec{{Name: "a", Kind: "noop", Params: map[string]any{"x": fmt.Sprintf("{{range %d}}{{end}}ok", steps)}}}
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name  string
		ctx   context.Context
		req   app.SubmitRequest
		field string // "" when accepted
	}{
		{"within every bound", context.Background(), app.SubmitRequest{Stages: busy(1000), Tenants: tenants(20), DryRun: true}, ""},
		{"past a tenant's bound", context.Background(), app.SubmitRequest{Stages: busy(stage.MaxRangeSteps + 1), Tenants: tenants(1), DryRun: true}, "stages[0].params.x"},
		{"past the plan's bound", context.Background(), app.SubmitRequest{Stages: busy(99_000), Tenants: tenants(102), DryRun: true}, "stages[0].params.x"},
		{"the client went away", ended, app.SubmitRequest{Stages: busy(10), Tenants: tenants(3)}, "body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			svc := newService(t)
			_, err := svc.Submit(tt.ctx, tt.req)
			if tt.field == "" {
				require.NoError(t, err)
				return
			}
			var ve *app.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, tt.field, ve.Violations[0].Field, "%+v", ve.Violations[0])
			assert.Zero(t, countPlans(t, svc), "nothing was created")
		})
	}
}

// A dry run renders and checks every tenant but answers one page of them: one 60 KiB param
// shared by the stages of 2,000 tenants (a 0.1 MB request) would otherwise answer 120 MiB.
func TestDryRunAnswersOnePage(t *testing.T) {
	t.Parallel()
	tenants := make([]app.TenantInput, 2000)
	for i := range tenants {
		tenants[i] = app.TenantInput{ID: fmt.Sprintf("da-%04d", i)}
	}
	big := strings.Repeat("x", 60<<10)
	svc := newService(t)
	tests := []struct {
		name      string
		page      app.PreviewPage
		first     string
		shown     int
		next      int
		wantLimit int
	}{
		{"the default page", app.PreviewPage{}, "da-0000", app.DefaultPreviewLimit, app.DefaultPreviewLimit, app.DefaultPreviewLimit},
		{"a page in the middle", app.PreviewPage{Offset: 500, Limit: 100}, "da-0500", 100, 600, 100},
		{"the last page, cut short", app.PreviewPage{Offset: 1990, Limit: 100}, "da-1990", 10, 0, 100},
		{"past the end", app.PreviewPage{Offset: 5000, Limit: 5}, "", 0, 0, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sub, err := svc.Submit(context.Background(), app.SubmitRequest{Tenants: tenants, DryRun: true, Page: tt.page,
				Stages: []stage.Spec{{Name: "a", Kind: "noop", Params: map[string]any{"blob": big, "who": "{{.TenantID}}"}}}})
			require.NoError(t, err)
			assert.Equal(t, 2000, sub.Tenants, "every tenant is counted")
			require.Len(t, sub.Preview, tt.shown)
			assert.Equal(t, tt.next, sub.Page.Next(sub.Tenants))
			assert.Equal(t, tt.wantLimit, sub.Page.Limit)
			if tt.shown > 0 {
				assert.Equal(t, tt.first, sub.Preview[0].TenantID)
				assert.Equal(t, tt.first, sub.Preview[0].Stages[0].Params["who"], "rendered for its tenant")
			}
		})
	}

	t.Run("a template failing for a tenant off the page is still refused", func(t *testing.T) {
		t.Parallel()
		_, err := svc.Submit(context.Background(), app.SubmitRequest{Tenants: tenants, DryRun: true,
			Stages: []stage.Spec{{Name: "a", Kind: "noop", Params: map[string]any{"v": `{{if eq .TenantID "da-1999"}}{{.Params.missing.x}}{{end}}`}}}})
		var ve *app.ValidationError
		require.ErrorAs(t, err, &ve)
		assert.Equal(t, "stages[0].params.v", ve.Violations[0].Field, "%+v", ve.Violations[0])
	})
	assert.Zero(t, countPlans(t, svc), "nothing was created")
}
