package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/wire"
)

// seen is one request as the fake server received it.
type seen struct {
	Method, Path, RawPath, Query string
	Header                       http.Header
	Body                         string
}

// fake answers every request with status and body (Content-Type ctype) and records it.
type fake struct {
	mu    sync.Mutex
	reqs  []seen
	srv   *httptest.Server
	delay time.Duration
}

func newFake(t *testing.T, status int, ctype, body string) *fake {
	t.Helper()
	f := &fake{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, seen{r.Method, r.URL.Path, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), string(b)})
		delay := f.delay
		f.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) last(t *testing.T) seen {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	require.NotEmpty(t, f.reqs, "the server saw no request")
	return f.reqs[len(f.reqs)-1]
}

const (
	planJSON = `{"planId":"01J0000000000000000000PLAN","name":"p","status":"RUNNING","progress":{"total":2,"RUNNING":2}}`
	taskJSON = `{"taskId":"01J0000000000000000000TASK","tenantId":"t/1","status":"FAILED","attempt":1}`
)

func TestRoutes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name       string
		body       string
		call       func(c *client.Client) (any, error)
		wantMethod string
		wantPath   string // escaped
		wantQuery  string
		wantBody   string
	}{
		{
			name: "submit json with key", body: planJSON,
			call: func(c *client.Client) (any, error) {
				p, d, err := c.SubmitPlan(ctx, []byte(`{"name":"p"}`), client.ContentTypeJSON, "k-1", false)
				if d != nil {
					t.Errorf("dry run answer on a real submission")
				}
				return p, err
			},
			wantMethod: "POST", wantPath: "/v1/plans", wantBody: `{"name":"p"}`,
		},
		{
			name: "submit dry run", body: `{"dryRun":true,"tenants":[{"tenantId":"a"}],"conflicts":["a"]}`,
			call: func(c *client.Client) (any, error) {
				p, d, err := c.SubmitPlan(ctx, []byte("name: p\n"), client.ContentTypeYAML, "", true)
				if p != nil {
					t.Errorf("plan returned on a dry run")
				}
				return d, err
			},
			wantMethod: "POST", wantPath: "/v1/plans", wantQuery: "dryRun=true", wantBody: "name: p\n",
		},
		{
			name: "list plans", body: `{"plans":[],"nextCursor":"X"}`,
			call:       func(c *client.Client) (any, error) { return c.Plans(ctx, "FAILED", 10, "01JCURSOR") },
			wantMethod: "GET", wantPath: "/v1/plans", wantQuery: "cursor=01JCURSOR&limit=10&status=FAILED",
		},
		{
			name: "list plans by labels", body: `{"plans":[]}`,
			call: func(c *client.Client) (any, error) {
				return c.ListPlans(ctx, client.PlanQuery{Labels: map[string]string{"team": "sre", "env": "a=b"}, Status: "RUNNING"})
			},
			wantMethod: "GET", wantPath: "/v1/plans", wantQuery: "label=env%3Da%3Db&label=team%3Dsre&status=RUNNING",
		},
		{
			name: "list plans without filters", body: `{"plans":[]}`,
			call:       func(c *client.Client) (any, error) { return c.Plans(ctx, "", 0, "") },
			wantMethod: "GET", wantPath: "/v1/plans",
		},
		{
			name: "plan", body: planJSON,
			call:       func(c *client.Client) (any, error) { return c.Plan(ctx, "01JPLAN", 0) },
			wantMethod: "GET", wantPath: "/v1/plans/01JPLAN",
		},
		{
			name: "plan long poll", body: planJSON,
			call:       func(c *client.Client) (any, error) { return c.Plan(ctx, "01JPLAN", 30*time.Second) },
			wantMethod: "GET", wantPath: "/v1/plans/01JPLAN", wantQuery: "wait=30s",
		},
		{
			name: "plan tasks", body: `{"tasks":[` + taskJSON + `]}`,
			call: func(c *client.Client) (any, error) {
				return c.PlanTasks(ctx, "01JPLAN", client.TaskQuery{Status: "FAILED"})
			},
			wantMethod: "GET", wantPath: "/v1/plans/01JPLAN/tasks", wantQuery: "limit=1000&status=FAILED",
		},
		{
			name: "plan tasks with every filter", body: `{"tasks":[` + taskJSON + `],"total":1}`,
			call: func(c *client.Client) (any, error) {
				return c.PlanTasks(ctx, "01JPLAN", client.TaskQuery{Status: "FAILED,INTERRUPTED", Stage: "push config",
					Class: "http_5xx", Tenant: "eu-", Sort: client.SortTenantDesc, Limit: 100})
			},
			wantMethod: "GET", wantPath: "/v1/plans/01JPLAN/tasks",
			wantQuery: "class=http_5xx&limit=100&sort=-tenant&stage=push+config&status=FAILED%2CINTERRUPTED&tenant=eu-",
		},
		{
			name: "plan summary", body: `{"planId":"01JPLAN","status":"RUNNING","total":3,"statuses":{"FAILED":1,"WAITING":2},` +
				`"stages":[{"index":0,"name":"a","counts":{"FAILED":1}},{"index":1,"name":"gate","counts":{"WAITING":2}},{"index":2,"counts":{}}],` +
				`"failureClasses":[{"class":"timeout","count":1,"sampleTenantId":"t1","sampleMessage":"slow"}],` +
				`"gates":[{"stageIndex":1,"stage":"gate","waiting":2}],"slowest":[]}`,
			call:       func(c *client.Client) (any, error) { return c.Summary(ctx, "01JPLAN") },
			wantMethod: "GET", wantPath: "/v1/plans/01JPLAN/summary",
		},
		{
			name: "bulk approve", body: `{"planId":"01JPLAN","action":"approve","matched":3,"applied":2,"skippedCount":1,` +
				`"skipped":[{"taskId":"01JTASK","tenantId":"t3","reason":"task: invalid transition"}]}`,
			call: func(c *client.Client) (any, error) {
				return c.BulkTasks(ctx, "01JPLAN", client.BulkApprove, wire.BulkTasksBody{Status: []string{"WAITING"}, Stage: "gate", Comment: "CHG-1"})
			},
			wantMethod: "POST", wantPath: "/v1/plans/01JPLAN/tasks/approve",
			wantBody: `{"status":["WAITING"],"stage":"gate","comment":"CHG-1"}`,
		},
		{
			name: "bulk retry sends fromCheckpoint false", body: `{"planId":"01JPLAN","action":"retry","matched":0,"applied":0,"skippedCount":0,"skipped":[]}`,
			call: func(c *client.Client) (any, error) {
				return c.BulkTasks(ctx, "01JPLAN", client.BulkRetry, wire.BulkTasksBody{Class: "timeout", Tenant: "eu-", FromCheckpoint: new(bool)})
			},
			wantMethod: "POST", wantPath: "/v1/plans/01JPLAN/tasks/retry",
			wantBody: `{"class":"timeout","tenant":"eu-","fromCheckpoint":false}`,
		},
		{
			name: "bulk rollback of a ring", body: `{"planId":"01JPLAN","action":"rollback","matched":2,"applied":2,"skippedCount":0,"skipped":[]}`,
			call: func(c *client.Client) (any, error) {
				return c.BulkTasks(ctx, "01JPLAN", client.BulkRollback, wire.BulkTasksBody{Ring: "canary", Status: []string{"COMPLETED"}})
			},
			wantMethod: "POST", wantPath: "/v1/plans/01JPLAN/tasks/rollback",
			wantBody: `{"status":["COMPLETED"],"ring":"canary"}`,
		},
		{
			name: "approve plan", body: planJSON,
			call:       func(c *client.Client) (any, error) { return c.ApprovePlan(ctx, "01JPLAN") },
			wantMethod: "POST", wantPath: "/v1/plans/01JPLAN/approve",
		},
		{
			name: "reject plan", body: planJSON,
			call:       func(c *client.Client) (any, error) { return c.RejectPlan(ctx, "01JPLAN", false) },
			wantMethod: "POST", wantPath: "/v1/plans/01JPLAN/reject",
		},
		{
			name: "reject plan and roll its ring back", body: planJSON,
			call:       func(c *client.Client) (any, error) { return c.RejectPlan(ctx, "01JPLAN", true) },
			wantMethod: "POST", wantPath: "/v1/plans/01JPLAN/reject", wantQuery: "rollback=true",
		},
		{
			name: "plan tasks page", body: `{"tasks":[` + taskJSON + `],"total":3,"nextCursor":"C2"}`,
			call: func(c *client.Client) (any, error) {
				return c.PlanTasksPage(ctx, "01JPLAN", client.TaskQuery{Status: "FAILED", Limit: 1, Cursor: "C1"})
			},
			wantMethod: "GET", wantPath: "/v1/plans/01JPLAN/tasks", wantQuery: "cursor=C1&limit=1&status=FAILED",
		},
		{
			name: "pause plan", body: planJSON,
			call:       func(c *client.Client) (any, error) { return c.PausePlan(ctx, "01JPLAN") },
			wantMethod: "POST", wantPath: "/v1/plans/01JPLAN/pause",
		},
		{
			name: "resume plan", body: planJSON,
			call:       func(c *client.Client) (any, error) { return c.ResumePlan(ctx, "01JPLAN", true) },
			wantMethod: "POST", wantPath: "/v1/plans/01JPLAN/resume", wantBody: `{"all":true}`,
		},
		{
			name: "skip tenant", body: taskJSON,
			call:       func(c *client.Client) (any, error) { return c.SkipTenant(ctx, "t 1", "gone") },
			wantMethod: "POST", wantPath: "/v1/tenants/t%201/skip", wantBody: `{"comment":"gone"}`,
		},
		{
			name: "cancel plan", body: planJSON,
			call:       func(c *client.Client) (any, error) { return c.CancelPlan(ctx, "01JPLAN") },
			wantMethod: "POST", wantPath: "/v1/plans/01JPLAN/cancel",
		},
		{
			name: "tenant task escapes the tenant", body: taskJSON,
			call:       func(c *client.Client) (any, error) { return c.TenantTask(ctx, "t/1 x?") },
			wantMethod: "GET", wantPath: "/v1/tenants/t%2F1%20x%3F/task",
		},
		{
			name: "tenant checkpoint", body: `{"taskId":"X","lastCompletedStageIndex":1,"completedStages":["a","b"]}`,
			call:       func(c *client.Client) (any, error) { return c.TenantCheckpoint(ctx, "t1") },
			wantMethod: "GET", wantPath: "/v1/tenants/t1/checkpoint",
		},
		{
			name: "retry from checkpoint", body: taskJSON,
			call:       func(c *client.Client) (any, error) { return c.RetryTenant(ctx, "t1", true) },
			wantMethod: "POST", wantPath: "/v1/tenants/t1/retry", wantBody: `{"fromCheckpoint":true}`,
		},
		{
			name: "retry from stage 0 sends false explicitly", body: taskJSON,
			call:       func(c *client.Client) (any, error) { return c.RetryTenant(ctx, "t1", false) },
			wantMethod: "POST", wantPath: "/v1/tenants/t1/retry", wantBody: `{"fromCheckpoint":false}`,
		},
		{
			name: "pause tenant", body: taskJSON,
			call:       func(c *client.Client) (any, error) { return c.PauseTenant(ctx, "t1") },
			wantMethod: "POST", wantPath: "/v1/tenants/t1/pause",
		},
		{
			name: "resume tenant", body: taskJSON,
			call:       func(c *client.Client) (any, error) { return c.ResumeTenant(ctx, "t1") },
			wantMethod: "POST", wantPath: "/v1/tenants/t1/resume",
		},
		{
			name: "cancel tenant", body: taskJSON,
			call:       func(c *client.Client) (any, error) { return c.CancelTenant(ctx, "t1") },
			wantMethod: "POST", wantPath: "/v1/tenants/t1/cancel",
		},
		{
			name: "rollback tenant escapes the tenant", body: taskJSON,
			call:       func(c *client.Client) (any, error) { return c.RollbackTenant(ctx, "t/1") },
			wantMethod: "POST", wantPath: "/v1/tenants/t%2F1/rollback",
		},
		{
			name: "task", body: taskJSON,
			call:       func(c *client.Client) (any, error) { return c.Task(ctx, "01JTASK") },
			wantMethod: "GET", wantPath: "/v1/tasks/01JTASK",
		},
		{
			name: "task long poll", body: taskJSON,
			call:       func(c *client.Client) (any, error) { return c.WaitTask(ctx, "01JTASK", 30*time.Second) },
			wantMethod: "GET", wantPath: "/v1/tasks/01JTASK", wantQuery: "wait=30s",
		},
		{
			name: "tenant task long poll", body: taskJSON,
			call:       func(c *client.Client) (any, error) { return c.WaitTenantTask(ctx, "t1", time.Minute) },
			wantMethod: "GET", wantPath: "/v1/tenants/t1/task", wantQuery: "wait=1m0s",
		},
		{
			name: "executors", body: `{"executors":[{"name":"exec-a","address":"a:1","startedAt":"2025-03-01T12:00:00Z","lastHeartbeat":"2025-03-01T12:00:00Z","runs":2,"alive":true,"self":true}]}`,
			call:       func(c *client.Client) (any, error) { return c.Executors(ctx) },
			wantMethod: "GET", wantPath: "/v1/executors",
		},
		{
			name: "health", body: `{"status":"ok"}`,
			call:       func(c *client.Client) (any, error) { return c.Health(ctx) },
			wantMethod: "GET", wantPath: "/healthz",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, http.StatusOK, "application/json", tt.body)
			c := client.New(f.srv.URL+"/", "s3cret", nil)
			got, err := tt.call(c)
			require.NoError(t, err)
			require.NotNil(t, got)

			r := f.last(t)
			assert.Equal(t, tt.wantMethod, r.Method)
			assert.Equal(t, tt.wantPath, r.RawPath)
			assert.Equal(t, tt.wantQuery, r.Query)
			assert.Equal(t, "Bearer s3cret", r.Header.Get("Authorization"))
			if tt.wantBody != "" {
				if json.Valid([]byte(tt.wantBody)) {
					assert.JSONEq(t, tt.wantBody, r.Body)
				} else {
					assert.Equal(t, tt.wantBody, r.Body)
				}
			}
			// The answer decodes into the DTO.
			want := reflect.New(reflect.TypeOf(got).Elem())
			require.NoError(t, json.Unmarshal([]byte(tt.body), want.Interface()))
			assert.Equal(t, want.Interface(), got)
		})
	}
}

func TestSubmitHeaders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, contentType, key string
	}{
		{name: "json with key", contentType: client.ContentTypeJSON, key: "release-42"},
		{name: "yaml without key", contentType: client.ContentTypeYAML},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, http.StatusCreated, "application/json", planJSON)
			_, _, err := client.New(f.srv.URL, "", nil).SubmitPlan(context.Background(), []byte("{}"), tt.contentType, tt.key, false)
			require.NoError(t, err)
			r := f.last(t)
			assert.Equal(t, tt.contentType, r.Header.Get("Content-Type"))
			assert.Equal(t, tt.key, r.Header.Get("Idempotency-Key"))
			_, hasKey := r.Header["Idempotency-Key"]
			assert.Equal(t, tt.key != "", hasKey)
			_, hasAuth := r.Header["Authorization"]
			assert.False(t, hasAuth, "no token, no Authorization header")
		})
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		status      int
		ctype, body string
		want        client.Error
		notFound    bool
	}{
		{
			name: "problem json", status: 400, ctype: "application/problem+json",
			body: `{"type":"about:blank","title":"Invalid input","status":400,"detail":"must be positive","field":"maxConcurrency"}`,
			want: client.Error{Status: 400, Problem: wire.Problem{Type: "about:blank", Title: "Invalid input", Status: 400, Detail: "must be positive", Field: "maxConcurrency"}},
		},
		{
			name: "conflict lists tenants", status: 409, ctype: "application/problem+json; charset=utf-8",
			body: `{"title":"Conflict","status":409,"tenants":["a","b"]}`,
			want: client.Error{Status: 409, Problem: wire.Problem{Title: "Conflict", Status: 409, Tenants: []string{"a", "b"}}},
		},
		{
			name: "not found", status: 404, ctype: "application/problem+json",
			body:     `{"title":"Not Found","status":404,"detail":"no task for tenant x"}`,
			want:     client.Error{Status: 404, Problem: wire.Problem{Title: "Not Found", Status: 404, Detail: "no task for tenant x"}},
			notFound: true,
		},
		{
			name: "plain text body", status: 502, ctype: "text/plain",
			body: "bad\ngateway\n",
			want: client.Error{Status: 502, Problem: wire.Problem{Title: "Bad Gateway", Status: 502, Detail: "bad gateway"}},
		},
		{
			name: "empty body", status: 500, ctype: "application/json",
			want: client.Error{Status: 500, Problem: wire.Problem{Title: "Internal Server Error", Status: 500}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tt.status, tt.ctype, tt.body)
			_, err := client.New(f.srv.URL, "", nil).TenantTask(context.Background(), "x")
			require.Error(t, err)
			var e *client.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tt.want, *e)
			assert.Equal(t, tt.status, client.StatusCode(err))
			assert.Equal(t, tt.notFound, client.IsNotFound(err))
			assert.NotContains(t, e.Error(), "\n")
		})
	}
}

func TestErrorString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  client.Error
		want string
	}{
		{
			name: "all parts",
			err:  client.Error{Status: 400, Problem: wire.Problem{Title: "Invalid input", Detail: "must be positive", Field: "maxConcurrency"}},
			want: "400 Invalid input: must be positive (field: maxConcurrency)",
		},
		{name: "title from status", err: client.Error{Status: 404}, want: "404 Not Found"},
		{
			name: "tenants when there is no detail",
			err:  client.Error{Status: 409, Problem: wire.Problem{Title: "Conflict", Tenants: []string{"a", "b"}}},
			want: "409 Conflict (tenants: a, b)",
		},
		{
			name: "the detail wins over the tenants",
			err:  client.Error{Status: 409, Problem: wire.Problem{Title: "Conflict", Detail: "a and b are busy", Tenants: []string{"a", "b"}}},
			want: "409 Conflict: a and b are busy",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.err.Error())
		})
	}
}

func TestNoStatusForTransportErrors(t *testing.T) {
	t.Parallel()
	f := newFake(t, 200, "application/json", "{}")
	url := f.srv.URL
	f.srv.Close()
	_, err := client.New(url, "", nil).Task(context.Background(), "x")
	require.Error(t, err)
	assert.Equal(t, 0, client.StatusCode(err))
}

// A client-wide timeout becomes a per-request one: it bounds ordinary requests, and a long
// poll gets its wait on top of it.
func TestTimeouts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		call    func(c *client.Client) error
		wantErr bool
	}{
		{
			name:    "ordinary request is bounded",
			call:    func(c *client.Client) error { _, err := c.Plan(context.Background(), "p", 0); return err },
			wantErr: true,
		},
		{
			name: "long poll outlives the client timeout",
			call: func(c *client.Client) error { _, err := c.Plan(context.Background(), "p", 2*time.Second); return err },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, 200, "application/json", planJSON)
			f.mu.Lock()
			f.delay = 400 * time.Millisecond
			f.mu.Unlock()
			hc := &http.Client{Timeout: 150 * time.Millisecond}
			c := client.New(f.srv.URL, "", hc)
			assert.Equal(t, 150*time.Millisecond, c.RequestTimeout)
			assert.Equal(t, 150*time.Millisecond, hc.Timeout, "the caller's client is left alone")
			err := tt.call(c)
			if tt.wantErr {
				require.Error(t, err)
				assert.ErrorIs(t, err, context.DeadlineExceeded)
				return
			}
			require.NoError(t, err)
		})
	}
}

// PlanTasks pages through a plan with more tasks than one page holds, following nextCursor
// and keeping the query's filters on every page.
func TestPlanTasksPages(t *testing.T) {
	t.Parallel()
	const total = client.TaskPageSize*2 + 7
	tests := []struct {
		name        string
		q           client.TaskQuery
		wantQueries []string
	}{
		{
			name:        "default page size",
			wantQueries: []string{"limit=1000", "cursor=at1000&limit=1000", "cursor=at2000&limit=1000"},
		},
		{
			name: "filters and a page size",
			q:    client.TaskQuery{Status: "FAILED,WAITING", Tenant: "t", Sort: client.SortOrder, Limit: 900},
			wantQueries: []string{
				"limit=900&sort=order&status=FAILED%2CWAITING&tenant=t",
				"cursor=at900&limit=900&sort=order&status=FAILED%2CWAITING&tenant=t",
				"cursor=at1800&limit=900&sort=order&status=FAILED%2CWAITING&tenant=t",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var queries []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				queries = append(queries, r.URL.RawQuery)
				mu.Unlock()
				from := 0
				if c := r.URL.Query().Get("cursor"); c != "" {
					from, _ = strconv.Atoi(strings.TrimPrefix(c, "at"))
				}
				limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
				page := wire.TaskList{Tasks: []wire.Task{}, Total: total}
				for i := from; i < min(from+limit, total); i++ {
					page.Tasks = append(page.Tasks, wire.Task{TenantID: "t" + strconv.Itoa(i)})
				}
				if from+limit < total {
					page.NextCursor = "at" + strconv.Itoa(from+limit)
				}
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(page)
			}))
			t.Cleanup(srv.Close)

			l, err := client.New(srv.URL, "", nil).PlanTasks(context.Background(), "p", tt.q)
			require.NoError(t, err)
			require.Len(t, l.Tasks, total)
			for i, task := range l.Tasks {
				require.Equal(t, "t"+strconv.Itoa(i), task.TenantID)
			}
			assert.Equal(t, total, l.Total)
			assert.Empty(t, l.NextCursor)
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, tt.wantQueries, queries)
		})
	}
}

// EachPlanTasksPage hands each page to fn as it comes and stops at fn's error.
func TestEachPlanTasksPageStops(t *testing.T) {
	t.Parallel()
	f := newFake(t, http.StatusOK, "application/json", `{"tasks":[`+taskJSON+`],"total":5,"nextCursor":"more"}`)
	stop := errors.New("enough")
	pages := 0
	err := client.New(f.srv.URL, "", nil).EachPlanTasksPage(context.Background(), "p", client.TaskQuery{Limit: 1}, func(page *wire.TaskList) error {
		pages++
		assert.Len(t, page.Tasks, 1)
		if pages == 2 {
			return stop
		}
		return nil
	})
	require.ErrorIs(t, err, stop)
	assert.Equal(t, 2, pages)
	assert.Equal(t, "cursor=more&limit=1", f.last(t).Query)
}
