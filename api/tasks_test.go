package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

// eventPrompt bounds how long a long poll may take to notice a change its events announce:
// below the 2 s between the rereads it makes without one.
const eventPrompt = 1500 * time.Millisecond

// hold is a stage kind whose runs last until the test releases them.
type hold struct{ release chan struct{} }

func newHold() *hold { return &hold{release: make(chan struct{})} }

func (h *hold) Run(ctx context.Context, _ stage.Request) (json.RawMessage, error) {
	select {
	case <-h.release:
		return json.RawMessage(`{}`), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (h *hold) register(r *stagekind.Registry) { _ = r.Register("hold", stage.HandlerFunc(h.Run)) }

// taskRoutes are the two reads of one task, by id and as its tenant's latest.
var taskRoutes = []struct {
	name string
	path func(tk wire.Task) string
}{
	{"task by id", func(tk wire.Task) string { return "/v1/tasks/" + tk.TaskID }},
	{"tenant task", func(tk wire.Task) string { return "/v1/tenants/" + url.PathEscape(tk.TenantID) + "/task" }},
}

// longPoll GETs target in the background; the answer comes on the channel with the time it
// came.
func longPoll(t *testing.T, target string) <-chan polled {
	t.Helper()
	out := make(chan polled, 1)
	go func() {
		res, err := http.Get(target)
		if err != nil {
			out <- polled{err: err, at: time.Now()}
			return
		}
		defer res.Body.Close()
		var tk wire.Task
		err = json.NewDecoder(res.Body).Decode(&tk)
		out <- polled{task: tk, status: res.StatusCode, err: err, at: time.Now()}
	}()
	return out
}

type polled struct {
	task   wire.Task
	status int
	err    error
	at     time.Time
}

// requireAnsweredAfter requires the long poll's answer: a 200 with a COMPLETED task, within
// eventPrompt of released (not before: the task ran until then).
func requireAnsweredAfter(t *testing.T, answer <-chan polled, released time.Time) wire.Task {
	t.Helper()
	select {
	case got := <-answer:
		require.NoError(t, got.err)
		require.Equal(t, http.StatusOK, got.status)
		assert.Equal(t, "COMPLETED", got.task.Status)
		assert.Less(t, got.at.Sub(released), eventPrompt, "answered when the task completed")
		return got.task
	case <-time.After(30 * time.Second):
		require.FailNow(t, "the long poll did not answer")
		return wire.Task{}
	}
}

// ?wait= on a task read long-polls until the task is at rest, or the wait passes.
func TestTaskLongPoll(t *testing.T) {
	t.Parallel()
	for i, rt := range taskRoutes {
		t.Run(rt.name, func(t *testing.T) {
			t.Parallel()
			h := newHold()
			base := startServer(t, h.register)
			tenant := func(what string) string { return fmt.Sprintf("lp-%d-%s", i, what) }
			first := func(tenant string, stages ...wire.StageRequest) wire.Task {
				t.Helper()
				p := submit(t, base, wire.PlanRequest{Stages: stages, Tenants: tenants(tenant)})
				return wire.Task{TaskID: p.TaskIDs[0], TenantID: tenant}
			}

			t.Run("completes during the wait", func(t *testing.T) {
				t.Parallel()
				tk := first(tenant("done"), wire.StageRequest{Name: "held", Kind: "hold"}, noop("after"))
				eventuallyTenant(t, base, tk.TenantID, func(tk wire.Task) bool { return tk.Status == "RUNNING" })
				answer := longPoll(t, base+rt.path(tk)+"?wait=30s")
				time.Sleep(300 * time.Millisecond) // the long poll waits
				select {
				case got := <-answer:
					require.FailNow(t, "answered while the task runs", "%+v", got)
				default:
				}
				released := time.Now()
				close(h.release)
				got := requireAnsweredAfter(t, answer, released)
				assert.Equal(t, tk.TaskID, got.TaskID)
				require.NotNil(t, got.Checkpoint, "the full task, checkpoint included")
			})
			t.Run("stops at a gate", func(t *testing.T) {
				t.Parallel()
				tk := first(tenant("gate"), sleep("bake", "200ms"), approval("change", "go?"))
				got := decode[wire.Task](t, get(t, base+rt.path(tk)+"?wait=30s"), http.StatusOK)
				assert.Equal(t, "WAITING", got.Status)
				require.NotNil(t, got.Wait)
				assert.Equal(t, "change", got.Wait.Stage)
			})
			t.Run("answers when the wait passes", func(t *testing.T) {
				t.Parallel()
				tk := first(tenant("long"), sleep("bake", "1m"))
				start := time.Now()
				got := decode[wire.Task](t, get(t, base+rt.path(tk)+"?wait=300ms"), http.StatusOK)
				assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
				assert.Contains(t, []string{"PENDING", "RUNNING"}, got.Status)
				decode[wire.Task](t, postJSON(t, base+"/v1/tenants/"+tk.TenantID+"/cancel", nil), http.StatusOK)
			})
			for _, bad := range []string{"soon", "-1s", "6m", "1"} {
				t.Run("bad wait "+bad, func(t *testing.T) {
					t.Parallel()
					tk := wire.Task{TaskID: "01JD0000000000000000000000", TenantID: "nobody"}
					requireProblem(t, get(t, base+rt.path(tk)+"?wait="+url.QueryEscape(bad)), http.StatusBadRequest, "wait")
				})
			}
		})
	}
}

// On Redis, a long poll on one executor answers when a task run by any executor sharing the
// Redis comes to rest: it follows the cluster's event stream.
func TestTaskLongPollAcrossExecutors(t *testing.T) {
	t.Parallel()
	for _, rt := range taskRoutes {
		t.Run(rt.name, func(t *testing.T) {
			t.Parallel()
			rs := redistest.Start(t)
			h := newHold()
			a := servertest.With(t, server.Config{RedisURL: rs.URL()}, h.register)
			b := servertest.With(t, server.Config{RedisURL: rs.URL()}, h.register)
			p := submit(t, a.URL(), wire.PlanRequest{Stages: []wire.StageRequest{{Name: "held", Kind: "hold"}}, Tenants: tenants("lp-cluster")})
			eventuallyTenant(t, b.URL(), "lp-cluster", func(tk wire.Task) bool { return tk.Status == "RUNNING" })
			answer := longPoll(t, b.URL()+rt.path(wire.Task{TaskID: p.TaskIDs[0], TenantID: "lp-cluster"})+"?wait=30s")
			time.Sleep(300 * time.Millisecond) // the long poll waits
			released := time.Now()
			close(h.release)
			requireAnsweredAfter(t, answer, released)
		})
	}
}

// planTaskPage reads one page of a plan's tasks.
func planTaskPage(t *testing.T, base, planID, query string) wire.TaskList {
	t.Helper()
	return decode[wire.TaskList](t, get(t, base+"/v1/plans/"+planID+"/tasks"+query), http.StatusOK)
}

// pageAll follows nextCursor from the first page of query and returns every page.
func pageAll(t *testing.T, base, planID, query string) []wire.TaskList {
	t.Helper()
	var pages []wire.TaskList
	page := planTaskPage(t, base, planID, "?"+query)
	for {
		pages = append(pages, page)
		if page.NextCursor == "" {
			return pages
		}
		require.Less(t, len(pages), 100, "paging does not end")
		page = planTaskPage(t, base, planID, "?"+query+"&cursor="+url.QueryEscape(page.NextCursor))
	}
}

// GET /v1/plans/{id}/tasks pages with a cursor in the plan's task order: every task exactly
// once while they run, with the total, and no nextCursor on the last page.
func TestPlanTasksPaging(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	const n = 2500
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("pg-%04d", i)
	}
	p := submit(t, base, wire.PlanRequest{Stages: []wire.StageRequest{noop("a")}, Tenants: tenants(ids...), MaxConcurrency: 50})

	seen := func(pages []wire.TaskList) []string {
		var out []string
		for _, pg := range pages {
			for _, tk := range pg.Tasks {
				out = append(out, tk.TaskID)
			}
		}
		return out
	}
	t.Run("while the tasks run", func(t *testing.T) {
		pages := pageAll(t, base, p.PlanID, "limit=1000")
		require.Len(t, pages, 3)
		for i, pg := range pages {
			assert.Equal(t, n, pg.Total, "page %d", i)
		}
		assert.Len(t, pages[0].Tasks, 1000)
		assert.Len(t, pages[2].Tasks, 500)
		assert.Equal(t, p.TaskIDs, seen(pages), "every task exactly once, in the plan's order")
	})

	require.Equal(t, "COMPLETED", waitPlan(t, base, p.PlanID).Status)
	tests := []struct {
		name      string
		query     string
		pages     int
		total     int
		wantTasks []string
	}{
		{"default limit", "", 3, n, p.TaskIDs},
		{"status and a smaller limit", "status=completed&limit=700", 4, n, p.TaskIDs},
		{"a status no task is in", "status=FAILED", 1, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pages := pageAll(t, base, p.PlanID, tt.query)
			assert.Len(t, pages, tt.pages)
			for _, pg := range pages {
				assert.Equal(t, tt.total, pg.Total)
			}
			assert.Equal(t, tt.wantTasks, seen(pages))
		})
	}
}

// A cursor that is not a nextCursor of that plan's listing is a 400 naming cursor.
func TestPlanTasksBadCursor(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	p := submit(t, base, wire.PlanRequest{Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("bc-1", "bc-2", "bc-3")})
	other := submit(t, base, wire.PlanRequest{Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("bc-4", "bc-5", "bc-6")})
	first := planTaskPage(t, base, p.PlanID, "?limit=1")
	require.NotEmpty(t, first.NextCursor)
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		name   string
		plan   string
		cursor string
	}{
		{"not base64", p.PlanID, "!!!"},
		{"not a cursor", p.PlanID, enc("hello")},
		{"another version", p.PlanID, enc("t9.order.1." + p.TaskIDs[0])},
		{"past the end", p.PlanID, enc("t2.order.4." + p.TaskIDs[2])},
		{"before the start", p.PlanID, enc("t2.order.0." + p.TaskIDs[0])},
		{"another sort's cursor", p.PlanID, enc("t2.tenant.1." + p.TaskIDs[0])},
		{"another plan's cursor", other.PlanID, first.NextCursor},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			requireProblem(t, get(t, base+"/v1/plans/"+tt.plan+"/tasks?cursor="+url.QueryEscape(tt.cursor)), http.StatusBadRequest, "cursor")
		})
	}
	t.Run("the next page", func(t *testing.T) {
		t.Parallel()
		next := planTaskPage(t, base, p.PlanID, "?limit=1&cursor="+url.QueryEscape(first.NextCursor))
		assert.Equal(t, []string{"bc-2"}, tenantIDs(next.Tasks))
		assert.Equal(t, 3, next.Total)
	})
}
