package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// gauge is a kind that measures: it answers the tenant it was rendered for, counting the
// measurements it took.
type gauge struct{ taken atomic.Int64 }

func (g *gauge) Run(context.Context, stage.Request) (json.RawMessage, error) { return nil, nil }

func (g *gauge) Measure(_ context.Context, params map[string]any) (stage.Measurement, error) {
	g.taken.Add(1)
	return stage.Measurement{At: time.Now(), Value: fmt.Sprint(params["of"]), Verdict: stage.VerdictSuccessful, Message: "held"}, nil
}

// A dry run measures each analysis stage of the page's tenants once and answers what it
// measured; it sends at most 100 queries (two analysis stages of 100 tenants: 200 wanted), and
// says of the others that they were not measured. A stage that reads an earlier output is
// not measured.
func TestDryRunMeasuresEachAnalysisOnce(t *testing.T) {
	t.Parallel()
	db := memrepo.New()
	kinds := stagekind.Builtin(stagekind.HTTPOptions{})
	g := &gauge{}
	require.NoError(t, kinds.Register("gauge", g))
	st := apptest.Stores{Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Locker: lock.NewMemory()}
	svc, _ := apptest.New(t, st, kinds, orchestrator.Config{})
	req := app.SubmitRequest{DryRun: true, Page: app.PreviewPage{Limit: 100}, Stages: []stage.Spec{
		{Name: "first", Kind: "gauge", Params: map[string]any{"of": "{{.TenantID}}"}},
		{Name: "second", Kind: "gauge", Params: map[string]any{"of": "{{.TenantID}}"}},
		{Name: "after", Kind: "gauge", Params: map[string]any{"of": `{{index .Outputs "first" "x"}}`}},
	}}
	for i := range 120 {
		req.Tenants = append(req.Tenants, app.TenantInput{ID: fmt.Sprintf("dm-%03d", i)})
	}
	sub, err := svc.Submit(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, sub.Preview, 100)
	assert.EqualValues(t, 100, g.taken.Load(), "at most 100 queries")
	measured, skipped := 0, 0
	for _, tp := range sub.Preview {
		for _, s := range tp.Stages[:2] {
			require.NotNil(t, s.Measurement, "%s %s", tp.TenantID, s.Name)
			if s.Measurement.Verdict == stage.VerdictSuccessful {
				measured++
				assert.Equal(t, tp.TenantID, s.Measurement.Value, "rendered for its tenant")
			} else {
				skipped++
				assert.Contains(t, s.Measurement.Message, "not measured")
			}
		}
		assert.Nil(t, tp.Stages[2].Measurement, "reads an output: not measured")
	}
	assert.Equal(t, 100, measured)
	assert.Equal(t, 100, skipped)
	assert.Zero(t, countPlans(t, svc), "a dry run creates nothing")
}
