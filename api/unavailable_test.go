package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/availability"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

// oomReply is what Redis answers a write while it is out of memory (maxmemory, noeviction).
const oomReply = "OOM command not allowed when used memory > 'maxmemory'."

// failingPlans is the in-memory plan repository whose List fails with err: a store error the
// API knows nothing about.
type failingPlans struct {
	plan.Repository
	err error
}

func (f failingPlans) List(context.Context, plan.Filter) ([]*plan.Plan, error) { return nil, f.err }

// failingService returns the use cases over the in-memory store, with listing plans failing
// with err and new plans refused when refuse says so.
func failingService(t *testing.T, err error, refuse bool) *app.Service {
	t.Helper()
	db := memrepo.New()
	plans := failingPlans{Repository: db.Plans(), err: err}
	locker := lock.NewMemory()
	kinds := stagekind.Builtin(stagekind.HTTPOptions{})
	_, orch := apptest.New(t, apptest.Stores{
		Creator: db, Plans: plans, Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Locker: locker,
	}, kinds, orchestrator.Config{})
	return app.New(app.Deps{
		Creator: db, Plans: plans, Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Index: db.Tasks(), Holders: locker, Kinds: kinds,
		Launcher: orch, PlanControl: orch, TaskControl: orch, Reaper: orch, Watcher: orch, Unlocker: orch, Availability: availability.Func(func() availability.State {
			return availability.State{Shared: true, Reached: true, Degraded: refuse}
		}),
	})
}

func degradedBy(reason string) func() wire.Health {
	since := time.Date(2026, 11, 21, 16, 20, 5, 0, time.UTC)
	journal := 3
	return func() wire.Health {
		return wire.Health{Status: "degraded", Redis: "degraded", Since: &since, Journal: &journal, Reason: reason}
	}
}

func healthy() wire.Health { return wire.Health{Status: "ok", Redis: "ok"} }

// While Redis is away an error the API does not know is the outage's: a 503 naming its reason,
// never a 500; a panic stays a 500 (a bug), and so does an unknown error while Redis answers.
func TestErrorsWhileRedisIsAwayAreUnavailable(t *testing.T) {
	t.Parallel()
	oom := errors.New(oomReply)
	storeErr := fmt.Errorf("orchestrator: schedule plan: %w", oom)
	isOOM := func(err error) bool { return errors.Is(err, oom) }
	tests := []struct {
		name        string
		readiness   func() wire.Health
		unavailable func(error) bool // Options.Unavailable
		refuse      bool
		method      string
		target      string
		body        string
		status      int
		typ         string
		detail      []string // substrings of the detail
	}{
		{"a store error while degraded", degradedBy("redisrepo: save task: " + oomReply), nil, false,
			http.MethodGet, "/v1/plans", "", http.StatusServiceUnavailable, wire.ProblemUnavailable,
			[]string{"Redis is unavailable", "reason: redisrepo: save task: OOM command not allowed"}},
		{"a store error while Redis answers", healthy, nil, false,
			http.MethodGet, "/v1/plans", "", http.StatusInternalServerError, wire.ProblemInternal,
			[]string{"internal error"}},
		{"an outage error before the executor switched to degraded", healthy, isOOM, false,
			http.MethodGet, "/v1/plans", "", http.StatusServiceUnavailable, wire.ProblemUnavailable,
			[]string{"Redis is unavailable"}},
		{"new plans refused while degraded", degradedBy("redisrepo: save task: " + oomReply), nil, true,
			http.MethodPost, "/v1/plans", `{"name":"p","stages":[{"name":"s","kind":"noop"}],"tenants":[{"id":"t1"}]}`,
			http.StatusServiceUnavailable, wire.ProblemUnavailable,
			[]string{"refuses new plans", "reason: redisrepo: save task: OOM command not allowed"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			h := api.NewRouter(failingService(t, storeErr, tc.refuse), api.Options{
				Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Readiness: tc.readiness, Unavailable: tc.unavailable,
			})
			rec := httptestDo(t, h, tc.method, tc.target, tc.body)
			require.Equal(t, tc.status, rec.status, "body: %s", rec.body)
			assert.Equal(t, wire.ProblemContentType, rec.header.Get("Content-Type"))
			var p wire.Problem
			require.NoError(t, json.Unmarshal(rec.body, &p))
			assert.Equal(t, tc.typ, p.Type)
			assert.Equal(t, tc.status, p.Status)
			for _, want := range tc.detail {
				assert.Contains(t, p.Detail, want)
			}
			if tc.status == http.StatusServiceUnavailable && tc.method == http.MethodGet {
				assert.Contains(t, logs.String(), "http request failed while Redis is away", "the cause is logged")
				assert.Contains(t, logs.String(), "orchestrator: schedule plan", "the error itself is logged")
			}
		})
	}

	t.Run("a panic stays a 500 while degraded", func(t *testing.T) {
		t.Parallel()
		// No service: every use case panics (nil pointer).
		h := api.NewRouter(nil, api.Options{Logger: slog.New(slog.DiscardHandler), Readiness: degradedBy(oomReply)})
		rec := httptestDo(t, h, http.MethodGet, "/v1/plans", "")
		require.Equal(t, http.StatusInternalServerError, rec.status)
		var p wire.Problem
		require.NoError(t, json.Unmarshal(rec.body, &p))
		assert.Equal(t, wire.ProblemInternal, p.Type)
	})
}

// httptestDo serves one request on h and returns the answer.
func httptestDo(t *testing.T, h http.Handler, method, target, body string) response {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}
