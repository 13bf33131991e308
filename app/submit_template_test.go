package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// target is an HTTP server recording the path and query of every request it gets.
type target struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // escaped path ? raw query
}

func newTarget(t *testing.T, body string) *target {
	t.Helper()
	tg := &target{}
	tg.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tg.mu.Lock()
		tg.seen = append(tg.seen, r.URL.EscapedPath()+"?"+r.URL.RawQuery)
		tg.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(tg.Close)
	return tg
}

func (tg *target) requests() []string {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return append([]string(nil), tg.seen...)
}

func waitPlan(t *testing.T, svc *app.Service, id string) app.PlanView {
	t.Helper()
	v, err := svc.WaitPlan(context.Background(), id, 10*time.Second)
	require.NoError(t, err)
	require.True(t, v.Plan.Status().Terminal(), "the plan ended")
	return v
}

func TestHTTPStageReadingAMissingOutputKeySendsNothing(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	tg := newTarget(t, `{}`)
	sub, err := svc.Submit(context.Background(), app.SubmitRequest{
		Stages: []stage.Spec{
			{Name: "a", Kind: "noop"},
			{Name: "call", Kind: "http", Params: map[string]any{
				"url": tg.URL + `/nullidx/{{index .Outputs "a" "x"}}?from={{index .Outputs "a" "x"}}`,
			}},
		},
		Tenants: []app.TenantInput{{ID: "nullidx-1"}},
	})
	require.NoError(t, err, "at submission the output of an earlier stage may have any key")

	assert.Equal(t, plan.Failed, waitPlan(t, svc, sub.Plan.Plan.ID()).Plan.Status())
	assert.Empty(t, tg.requests(), "no request went out with a hole in its URL")
	v, err := svc.TenantTask(context.Background(), "nullidx-1")
	require.NoError(t, err)
	assert.Equal(t, task.Failed, v.Task.Status())
	require.NotNil(t, v.Task.LastError())
	assert.Equal(t, "call", v.Task.LastError().Stage)
	assert.Equal(t, stage.ClassPermanent, v.Task.LastError().Class)
	assert.Equal(t, `params.url: stage "a" has no output key "x"`, v.Task.LastError().Message)
}

func TestHTTPStageEscapesWhatItsURLTemplateInserts(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	tg := newTarget(t, `{"name":"a b/c?d=1&e#f"}`)
	sub, err := svc.Submit(context.Background(), app.SubmitRequest{
		Stages: []stage.Spec{
			{Name: "one", Kind: "http", Params: map[string]any{"url": tg.URL + "/name"}},
			{Name: "two", Kind: "http", Params: map[string]any{
				"url": `{{.Params.base}}/items/{{index .Outputs "one" "name"}}?from={{index .Outputs "one" "name"}}`,
			}},
		},
		Tenants: []app.TenantInput{{ID: "esc-1", Params: map[string]any{"base": tg.URL}}},
	})
	require.NoError(t, err)
	assert.Equal(t, plan.Completed, waitPlan(t, svc, sub.Plan.Plan.ID()).Plan.Status())
	assert.Equal(t, []string{
		"/name?",
		"/items/a%20b%2Fc%3Fd=1&e%23f?from=a+b%2Fc%3Fd%3D1%26e%23f", // url.PathEscape, url.QueryEscape
	}, tg.requests())
}
