// Package client is a typed Go client of the executor's HTTP API (docs/design.md §7). Every method
// maps to one route and returns the bodies of package wire; a non-2xx answer is an *Error
// carrying the server's problem+json body. It imports nothing of the server.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/executor-dev/executor/wire"
)

// DefaultRequestTimeout bounds a request that is not a long poll when New is given no
// http.Client timeout.
const DefaultRequestTimeout = 30 * time.Second

// Content types of a plan submission.
const (
	ContentTypeJSON = "application/json"
	ContentTypeYAML = "application/yaml"
)

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// Client talks to one executor. It is safe for concurrent use.
type Client struct {
	base  string // scheme://host[:port][/prefix], no trailing slash
	token string
	hc    *http.Client

	// RequestTimeout bounds each request. A long poll (Plan with wait > 0) gets its wait on
	// top of it. Zero means no bound other than the caller's context.
	RequestTimeout time.Duration
	// UserAgent is sent with every request.
	UserAgent string
}

// New returns a client of the executor at baseURL (e.g. "http://127.0.0.1:8080"). token,
// when not empty, is sent as "Authorization: Bearer <token>". httpClient may be nil (a
// default client). Its Timeout, if any, is not applied client-wide (it would cut long polls):
// it becomes RequestTimeout, which each request applies through its own context.
func New(baseURL, token string, httpClient *http.Client) *Client {
	c := &Client{
		base:           strings.TrimRight(baseURL, "/"),
		token:          token,
		RequestTimeout: DefaultRequestTimeout,
		UserAgent:      "executor-client",
	}
	if httpClient == nil {
		c.hc = &http.Client{}
	} else {
		hc := *httpClient // a shallow copy: the caller's client keeps its own settings
		if hc.Timeout > 0 {
			c.RequestTimeout = hc.Timeout
			hc.Timeout = 0
		}
		c.hc = &hc
	}
	return c
}

// BaseURL returns the executor's base URL as given to New, without a trailing slash.
func (c *Client) BaseURL() string { return c.base }

// Error is a non-2xx answer of the executor.
type Error struct {
	Status  int          // HTTP status code
	Problem wire.Problem // the problem+json body; synthesised from the status when the body is not one
}

// Error returns "<status> <title>: <detail> (field: X)", leaving out empty parts; a 409
// without a detail lists its conflicting tenants instead.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(e.Status))
	title := e.Problem.Title
	if title == "" {
		title = http.StatusText(e.Status)
	}
	if title != "" {
		b.WriteString(" ")
		b.WriteString(title)
	}
	if e.Problem.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Problem.Detail)
	}
	if e.Problem.Field != "" {
		b.WriteString(" (field: ")
		b.WriteString(e.Problem.Field)
		b.WriteString(")")
	}
	if len(e.Problem.Tenants) > 0 && e.Problem.Detail == "" {
		b.WriteString(" (tenants: ")
		b.WriteString(strings.Join(e.Problem.Tenants, ", "))
		b.WriteString(")")
	}
	return b.String()
}

// StatusCode returns the HTTP status of an *Error in err's chain, or 0 when there is none
// (a transport error, a cancelled context, ...).
func StatusCode(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// IsNotFound reports whether err is a 404 answer.
func IsNotFound(err error) bool { return StatusCode(err) == http.StatusNotFound }

// SubmitPlan posts a plan (POST /v1/plans). contentType is ContentTypeJSON or
// ContentTypeYAML; idempotencyKey, when not empty, is sent as the Idempotency-Key header. On a
// dry run the plan is nil and the dry-run report is returned; otherwise the dry-run report is
// nil. A repeated idempotency key with the same plan returns the first plan (Submit tells
// that replay apart); with another plan it is a 422 *Error.
func (c *Client) SubmitPlan(ctx context.Context, body []byte, contentType, idempotencyKey string, dryRun bool) (*wire.Plan, *wire.DryRun, error) {
	if dryRun {
		out, err := c.DryRun(ctx, body, contentType, wire.PreviewPage{})
		return nil, out, err
	}
	h := http.Header{}
	h.Set("Content-Type", contentType)
	if idempotencyKey != "" {
		h.Set("Idempotency-Key", idempotencyKey)
	}
	var out wire.Plan
	if err := c.do(ctx, request{method: http.MethodPost, path: "/v1/plans", header: h, body: body}, &out); err != nil {
		return nil, nil, err
	}
	return &out, nil, nil
}

// DryRun previews a plan (POST /v1/plans?dryRun=true): every tenant is rendered and checked,
// and the answer holds page's tenants (page.Offset, from the first; page.Limit, 0: the
// executor's default). Nothing is created.
func (c *Client) DryRun(ctx context.Context, body []byte, contentType string, page wire.PreviewPage) (*wire.DryRun, error) {
	q := url.Values{"dryRun": {"true"}}
	if page.Offset > 0 {
		q.Set("previewOffset", strconv.Itoa(page.Offset))
	}
	if page.Limit > 0 {
		q.Set("previewLimit", strconv.Itoa(page.Limit))
	}
	h := http.Header{}
	h.Set("Content-Type", contentType)
	var out wire.DryRun
	if err := c.do(ctx, request{method: http.MethodPost, path: "/v1/plans", query: q, header: h, body: body}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Submit posts a plan (POST /v1/plans, not a dry run) as SubmitPlan does, and reports whether
// the answer replays an earlier submission (Idempotent-Replayed: true): the same
// idempotencyKey was submitted before with the same plan, and nothing new was created. The
// same key with another plan is a 422 *Error whose problem names the Idempotency-Key field.
func (c *Client) Submit(ctx context.Context, body []byte, contentType, idempotencyKey string) (*wire.Plan, bool, error) {
	h := http.Header{}
	h.Set("Content-Type", contentType)
	if idempotencyKey != "" {
		h.Set(wire.IdempotencyKeyHeader, idempotencyKey)
	}
	var answer http.Header
	req := request{method: http.MethodPost, path: "/v1/plans", header: h, body: body, answer: &answer}
	var out wire.Plan
	if err := c.do(ctx, req, &out); err != nil {
		return nil, false, err
	}
	return &out, answer.Get(wire.IdempotentReplayedHeader) == "true", nil
}

// Plans lists plans newest first (GET /v1/plans). status, limit (0: the server's default)
// and cursor (a previous page's NextCursor) are optional. ListPlans also selects by labels.
func (c *Client) Plans(ctx context.Context, status string, limit int, cursor string) (*wire.PlanList, error) {
	return c.ListPlans(ctx, PlanQuery{Status: status, Limit: limit, Cursor: cursor})
}

// Plan returns a plan (GET /v1/plans/{planId}). With wait > 0 the server long-polls: it
// answers once the plan is terminal or after wait, whichever comes first. The request's own
// deadline is wait plus RequestTimeout. The plan leaves its task ids out (the server's default:
// 2.8 MB for 100,000 tasks, on every long poll); PlanTasks lists the tasks, Summary counts them.
func (c *Client) Plan(ctx context.Context, id string, wait time.Duration) (*wire.Plan, error) {
	var out wire.Plan
	req := request{method: http.MethodGet, path: planPath(id, ""), query: waitQuery(wait), wait: wait}
	if err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Summary returns a plan counted without listing it (GET /v1/plans/{planId}/summary): its
// tasks by status, by current stage and status, by failure class with a sample, the gates
// with WAITING tasks and the RUNNING tasks longest at their stage.
func (c *Client) Summary(ctx context.Context, planID string) (*wire.PlanSummary, error) {
	var out wire.PlanSummary
	if err := c.do(ctx, request{method: http.MethodGet, path: planPath(planID, "summary")}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Actions of BulkTasks: what POST /v1/plans/{planId}/tasks/{action} does to every matching task.
const (
	BulkApprove = "approve"
	BulkReject  = "reject"
	BulkRetry   = "retry"
	BulkCancel  = "cancel"
	// BulkRollback rolls every matching task back: each undoes the stages it completed,
	// newest first (RollbackTenant for one).
	BulkRollback = "rollback"
	// BulkSkip skips every matching task that does not run (default: the FAILED ones): each
	// ends SKIPPED, and the plan completes with exceptions once the others completed.
	BulkSkip = "skip"
)

// BulkTasks acts on every task of a plan matching body's filters (POST
// /v1/plans/{planId}/tasks/{action}; action is BulkApprove, BulkReject, BulkRetry, BulkCancel
// or BulkRollback) and returns how many matched, how many took the action, and the skipped ones
// with the reason. A task that cannot take the action when it is reached is skipped, not an
// error: the answer is still a 200.
func (c *Client) BulkTasks(ctx context.Context, planID, action string, body wire.BulkTasksBody) (*wire.BulkResult, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("client: bulk %s: %w", action, err)
	}
	var out wire.BulkResult
	req := request{method: http.MethodPost, path: planPath(planID, "tasks/"+url.PathEscape(action)),
		header: http.Header{"Content-Type": {ContentTypeJSON}}, body: b}
	if err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// TaskPageSize is the page size PlanTasks asks for by default (the server's maximum).
const TaskPageSize = 1000

// Orders of TaskQuery.Sort.
const (
	SortOrder      = "order"   // the plan's task order (the submission's order of tenants): the default
	SortOrderDesc  = "-order"  // the plan's task order, last first
	SortTenant     = "tenant"  // tenant id ascending
	SortTenantDesc = "-tenant" // tenant id descending
)

// TaskQuery selects a plan's tasks (GET /v1/plans/{planId}/tasks). Every field is optional;
// the filters (Status, Stage, Class, Tenant) keep the tasks matching all of them.
type TaskQuery struct {
	Status string // only tasks in these statuses: one, or a comma-separated list ("FAILED,INTERRUPTED"), any case
	Stage  string // only tasks at this current stage: its name, or its index ("0".."len(stages)"; len(stages): every stage done)
	Class  string // only tasks whose last error has this failure class ("permanent", "retryable", "timeout", ...)
	Tenant string // only tasks whose tenant id starts with this prefix
	Sort   string // SortOrder (default), SortOrderDesc, SortTenant or SortTenantDesc
	Limit  int    // at most this many per page (0: the server's default, 1000; PlanTasks: TaskPageSize)
	Cursor string // the page after this one: a previous page's NextCursor (with the same Sort)
}

// values is q as the listing's query parameters.
func (q TaskQuery) values() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"status": q.Status, "stage": q.Stage, "class": q.Class,
		"tenant": q.Tenant, "sort": q.Sort, "cursor": q.Cursor} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// PlanTasksPage returns one page of a plan's tasks matching q, in q.Sort's order, with the
// total of the tasks matching q and, when more follow, the NextCursor of the next page.
func (c *Client) PlanTasksPage(ctx context.Context, id string, q TaskQuery) (*wire.TaskList, error) {
	var out wire.TaskList
	req := request{method: http.MethodGet, path: planPath(id, "tasks"), query: q.values()}
	if err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// EachPlanTasksPage reads every page of a plan's tasks matching q (GET
// /v1/plans/{planId}/tasks), from q.Cursor on (empty: the first page), q.Limit tasks at a
// time (0: TaskPageSize), following the pages' nextCursor, and calls fn with each page as it
// comes; an error of fn stops it and is returned. A task is listed at most once, and without
// a filter every task exactly once, however statuses change meanwhile; with filters each page
// keeps the tasks matching them when it is read. Every page carries the plan's MissingTasks.
func (c *Client) EachPlanTasksPage(ctx context.Context, id string, q TaskQuery, fn func(page *wire.TaskList) error) error {
	if q.Limit <= 0 {
		q.Limit = TaskPageSize
	}
	for {
		page, err := c.PlanTasksPage(ctx, id, q)
		if err != nil {
			return err
		}
		if page.Tasks == nil {
			page.Tasks = []wire.Task{}
		}
		if err := fn(page); err != nil {
			return err
		}
		if page.NextCursor == "" {
			return nil
		}
		q.Cursor = page.NextCursor
	}
}

// PlanTasks returns every task of a plan matching q in q.Sort's order, reading all pages as
// EachPlanTasksPage does (q.Limit tasks at a time, TaskPageSize when 0). Total and
// MissingTasks are the last page's; NextCursor is empty. A listing of 100,000 tasks holds
// them all in memory: EachPlanTasksPage handles them page by page.
func (c *Client) PlanTasks(ctx context.Context, id string, q TaskQuery) (*wire.TaskList, error) {
	out := wire.TaskList{Tasks: []wire.Task{}}
	err := c.EachPlanTasksPage(ctx, id, q, func(page *wire.TaskList) error {
		out.Tasks = append(out.Tasks, page.Tasks...)
		out.Total, out.MissingTasks = page.Total, page.MissingTasks
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// PausePlan pauses a plan (POST /v1/plans/{planId}/pause).
func (c *Client) PausePlan(ctx context.Context, id string) (*wire.Plan, error) {
	return c.planOp(ctx, id, "pause")
}

// ResumePlan resumes a paused plan and the tasks its pause paused; with all, the tasks paused
// one by one too (POST /v1/plans/{planId}/resume).
func (c *Client) ResumePlan(ctx context.Context, id string, all bool) (*wire.Plan, error) {
	var out wire.Plan
	if err := c.postJSON(ctx, planPath(id, "resume"), wire.ResumeBody{All: all}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CancelPlan cancels a plan (POST /v1/plans/{planId}/cancel).
func (c *Client) CancelPlan(ctx context.Context, id string) (*wire.Plan, error) {
	return c.planOp(ctx, id, "cancel")
}

func (c *Client) planOp(ctx context.Context, id, op string) (*wire.Plan, error) {
	var out wire.Plan
	req := request{method: http.MethodPost, path: planPath(id, op)}
	if err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// TenantTask returns the tenant's latest task with its lease and checkpoint summary
// (GET /v1/tenants/{tenantId}/task).
func (c *Client) TenantTask(ctx context.Context, tenant string) (*wire.Task, error) {
	return c.WaitTenantTask(ctx, tenant, 0)
}

// WaitTenantTask is TenantTask with a long poll: with wait > 0 the server answers once the
// task is at rest (ended, WAITING, PAUSED or INTERRUPTED) or after wait, whichever comes
// first. The request's own deadline is wait plus RequestTimeout.
func (c *Client) WaitTenantTask(ctx context.Context, tenant string, wait time.Duration) (*wire.Task, error) {
	var out wire.Task
	req := request{method: http.MethodGet, path: tenantPath(tenant, "task"), query: waitQuery(wait), wait: wait}
	if err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// TenantCheckpoint returns the checkpoint of the tenant's latest task
// (GET /v1/tenants/{tenantId}/checkpoint). It is a 404 *Error when there is none.
func (c *Client) TenantCheckpoint(ctx context.Context, tenant string) (*wire.Checkpoint, error) {
	var out wire.Checkpoint
	req := request{method: http.MethodGet, path: tenantPath(tenant, "checkpoint")}
	if err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RetryTenant retries the tenant's latest task (POST /v1/tenants/{tenantId}/retry). With
// fromCheckpoint it resumes at the stage after the last completed one; without, it restarts
// at stage 0. The choice is always sent explicitly.
func (c *Client) RetryTenant(ctx context.Context, tenant string, fromCheckpoint bool) (*wire.Task, error) {
	var out wire.Task
	if err := c.postJSON(ctx, tenantPath(tenant, "retry"), wire.RetryBody{FromCheckpoint: &fromCheckpoint}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PauseTenant pauses the tenant's latest task at its next stage boundary
// (POST /v1/tenants/{tenantId}/pause).
func (c *Client) PauseTenant(ctx context.Context, tenant string) (*wire.Task, error) {
	return c.tenantOp(ctx, tenant, "pause")
}

// ResumeTenant resumes the tenant's paused task (POST /v1/tenants/{tenantId}/resume).
func (c *Client) ResumeTenant(ctx context.Context, tenant string) (*wire.Task, error) {
	return c.tenantOp(ctx, tenant, "resume")
}

// CancelTenant cancels the tenant's latest task (POST /v1/tenants/{tenantId}/cancel).
func (c *Client) CancelTenant(ctx context.Context, tenant string) (*wire.Task, error) {
	return c.tenantOp(ctx, tenant, "cancel")
}

// SkipTenant ends the tenant's latest task SKIPPED: it is not deployed, by the operator's
// decision (comment: kept in the audit record) (POST /v1/tenants/{tenantId}/skip).
func (c *Client) SkipTenant(ctx context.Context, tenant, comment string) (*wire.Task, error) {
	var out wire.Task
	if err := c.postJSON(ctx, tenantPath(tenant, "skip"), wire.SkipBody{Comment: comment}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// postJSON POSTs body as JSON to path and decodes the answer into out.
func (c *Client) postJSON(ctx context.Context, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	h := http.Header{}
	h.Set("Content-Type", ContentTypeJSON)
	return c.do(ctx, request{method: http.MethodPost, path: path, header: h, body: b}, out)
}

func (c *Client) tenantOp(ctx context.Context, tenant, op string) (*wire.Task, error) {
	var out wire.Task
	if err := c.do(ctx, request{method: http.MethodPost, path: tenantPath(tenant, op)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Task returns a task by id with its lease and checkpoint summary (GET /v1/tasks/{taskId}).
func (c *Client) Task(ctx context.Context, id string) (*wire.Task, error) {
	return c.WaitTask(ctx, id, 0)
}

// WaitTask is Task with a long poll: with wait > 0 the server answers once the task is at
// rest (ended, WAITING, PAUSED or INTERRUPTED) or after wait, whichever comes first. The
// request's own deadline is wait plus RequestTimeout.
func (c *Client) WaitTask(ctx context.Context, id string, wait time.Duration) (*wire.Task, error) {
	var out wire.Task
	req := request{method: http.MethodGet, path: "/v1/tasks/" + url.PathEscape(id), query: waitQuery(wait), wait: wait}
	if err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Executors lists the executors sharing the server's store, sorted by name, alive or not
// (GET /v1/executors); Self marks the server.
func (c *Client) Executors(ctx context.Context) (*wire.ExecutorList, error) {
	var out wire.ExecutorList
	if err := c.do(ctx, request{method: http.MethodGet, path: "/v1/executors"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Health calls GET /healthz.
func (c *Client) Health(ctx context.Context) (*wire.Health, error) {
	var out wire.Health
	if err := c.do(ctx, request{method: http.MethodGet, path: "/healthz"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// waitQuery is ?wait= of a long poll; none when wait is not positive.
func waitQuery(wait time.Duration) url.Values {
	if wait <= 0 {
		return nil
	}
	return url.Values{"wait": {wait.String()}}
}

// planPath is /v1/plans/{id}, then /sub when sub is not empty (sub already escaped).
func planPath(id, sub string) string {
	p := "/v1/plans/" + url.PathEscape(id)
	if sub != "" {
		p += "/" + sub
	}
	return p
}

func tenantPath(tenant, op string) string {
	return "/v1/tenants/" + url.PathEscape(tenant) + "/" + op
}

type request struct {
	method string
	path   string // already escaped
	query  url.Values
	header http.Header
	body   []byte
	wait   time.Duration // a long poll's wait, added to the request's deadline
	answer *http.Header  // when not nil, set to a 2xx answer's header
}

func (c *Client) do(ctx context.Context, r request, out any) error {
	if c.RequestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.wait+c.RequestTimeout)
		defer cancel()
	}
	u := c.base + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return fmt.Errorf("client: %s %s: %w", r.method, r.path, err)
	}
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json, application/problem+json")
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err // a *url.Error: it names the method and URL
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		_ = resp.Body.Close()
	}()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return decodeError(resp)
	}
	if r.answer != nil {
		*r.answer = resp.Header
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("client: %s %s: decode %d answer: %w", r.method, r.path, resp.StatusCode, err)
	}
	return nil
}

// decodeError turns a non-2xx answer into an *Error, keeping the problem+json body when
// there is one and a short excerpt of any other body as the detail.
func decodeError(resp *http.Response) error {
	e := &Error{Status: resp.StatusCode}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var p wire.Problem
	if (mt == "application/problem+json" || mt == "application/json") && json.Unmarshal(raw, &p) == nil {
		e.Problem = p
		if e.Problem.Status == 0 {
			e.Problem.Status = resp.StatusCode
		}
		if e.Problem.Title == "" {
			e.Problem.Title = http.StatusText(resp.StatusCode)
		}
		return e
	}
	e.Problem = wire.Problem{Status: resp.StatusCode, Title: http.StatusText(resp.StatusCode)}
	if detail := strings.Join(strings.Fields(string(raw)), " "); detail != "" {
		const maxDetail = 200
		if r := []rune(detail); len(r) > maxDetail {
			detail = string(r[:maxDetail]) + "…"
		}
		e.Problem.Detail = detail
	}
	return e
}
