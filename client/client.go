// Package client is a typed Go client of the executor's HTTP API (docs/design.md §7). Every method
// maps to one route and returns the wire DTOs of package api; a non-2xx answer is an *Error
// carrying the server's problem+json body.
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

	"github.com/executor-dev/executor/api"
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
	Status  int         // HTTP status code
	Problem api.Problem // the problem+json body; synthesised from the status when the body is not one
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
func (c *Client) SubmitPlan(ctx context.Context, body []byte, contentType, idempotencyKey string, dryRun bool) (*api.Plan, *api.DryRun, error) {
	q := url.Values{}
	if dryRun {
		q.Set("dryRun", "true")
	}
	h := http.Header{}
	h.Set("Content-Type", contentType)
	if idempotencyKey != "" {
		h.Set("Idempotency-Key", idempotencyKey)
	}
	req := request{method: http.MethodPost, path: "/v1/plans", query: q, header: h, body: body}
	if dryRun {
		var out api.DryRun
		if err := c.do(ctx, req, &out); err != nil {
			return nil, nil, err
		}
		return nil, &out, nil
	}
	var out api.Plan
	if err := c.do(ctx, req, &out); err != nil {
		return nil, nil, err
	}
	return &out, nil, nil
}

// Submit posts a plan (POST /v1/plans, not a dry run) as SubmitPlan does, and reports whether
// the answer replays an earlier submission (Idempotent-Replayed: true): the same
// idempotencyKey was submitted before with the same plan, and nothing new was created. The
// same key with another plan is a 422 *Error whose problem names the Idempotency-Key field.
func (c *Client) Submit(ctx context.Context, body []byte, contentType, idempotencyKey string) (*api.Plan, bool, error) {
	h := http.Header{}
	h.Set("Content-Type", contentType)
	if idempotencyKey != "" {
		h.Set(api.IdempotencyKeyHeader, idempotencyKey)
	}
	var answer http.Header
	req := request{method: http.MethodPost, path: "/v1/plans", header: h, body: body, answer: &answer}
	var out api.Plan
	if err := c.do(ctx, req, &out); err != nil {
		return nil, false, err
	}
	return &out, answer.Get(api.IdempotentReplayedHeader) == "true", nil
}

// Plans lists plans newest first (GET /v1/plans). status, limit (0: the server's default)
// and cursor (a previous page's NextCursor) are optional.
func (c *Client) Plans(ctx context.Context, status string, limit int, cursor string) (*api.PlanList, error) {
	q := url.Values{}
	if status != "" {
		q.Set("status", status)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	var out api.PlanList
	if err := c.do(ctx, request{method: http.MethodGet, path: "/v1/plans", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Plan returns a plan (GET /v1/plans/{planId}). With wait > 0 the server long-polls: it
// answers once the plan is terminal or after wait, whichever comes first. The request's own
// deadline is wait plus RequestTimeout. The plan carries its task ids.
func (c *Client) Plan(ctx context.Context, id string, wait time.Duration) (*api.Plan, error) {
	var out api.Plan
	q := waitQuery(wait)
	if q == nil {
		q = url.Values{}
	}
	q.Set("include", "taskIds") // the CLI's plan show -o json prints them (until it prints the summary)
	req := request{method: http.MethodGet, path: "/v1/plans/" + url.PathEscape(id), query: q, wait: wait}
	if err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// TaskPageSize is the page size PlanTasks asks for (the server's maximum).
const TaskPageSize = 1000

// TaskQuery selects a page of a plan's tasks (GET /v1/plans/{planId}/tasks). Every field is
// optional.
type TaskQuery struct {
	Status string // only tasks in this status
	Limit  int    // at most this many (0: the server's default, 1000)
	Cursor string // the page after this one: a previous page's NextCursor
}

// PlanTasksPage returns one page of a plan's tasks in the plan's task order, with the total
// of the tasks matching q and, when more follow, the NextCursor of the next page.
func (c *Client) PlanTasksPage(ctx context.Context, id string, q TaskQuery) (*api.TaskList, error) {
	v := url.Values{}
	if q.Status != "" {
		v.Set("status", q.Status)
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	var out api.TaskList
	req := request{method: http.MethodGet, path: "/v1/plans/" + url.PathEscape(id) + "/tasks", query: v}
	if err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PlanTasks returns all of a plan's tasks in the plan's task order (GET
// /v1/plans/{planId}/tasks), only those in status when status is not empty. It follows the
// pages' nextCursor, TaskPageSize tasks at a time: a task is listed at most once, and without
// a status every task exactly once, however statuses change meanwhile. Total is the last
// page's; NextCursor is empty.
func (c *Client) PlanTasks(ctx context.Context, id, status string) (*api.TaskList, error) {
	out := api.TaskList{Tasks: []api.Task{}}
	q := TaskQuery{Status: status, Limit: TaskPageSize}
	for {
		page, err := c.PlanTasksPage(ctx, id, q)
		if err != nil {
			return nil, err
		}
		out.Tasks = append(out.Tasks, page.Tasks...)
		out.Total, out.MissingTasks = page.Total, page.MissingTasks
		if page.NextCursor == "" {
			return &out, nil
		}
		q.Cursor = page.NextCursor
	}
}

// PausePlan pauses a plan (POST /v1/plans/{planId}/pause).
func (c *Client) PausePlan(ctx context.Context, id string) (*api.Plan, error) {
	return c.planOp(ctx, id, "pause")
}

// ResumePlan resumes a paused plan (POST /v1/plans/{planId}/resume).
func (c *Client) ResumePlan(ctx context.Context, id string) (*api.Plan, error) {
	return c.planOp(ctx, id, "resume")
}

// CancelPlan cancels a plan (POST /v1/plans/{planId}/cancel).
func (c *Client) CancelPlan(ctx context.Context, id string) (*api.Plan, error) {
	return c.planOp(ctx, id, "cancel")
}

func (c *Client) planOp(ctx context.Context, id, op string) (*api.Plan, error) {
	var out api.Plan
	req := request{method: http.MethodPost, path: "/v1/plans/" + url.PathEscape(id) + "/" + op}
	if err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// TenantTask returns the tenant's latest task with its lease and checkpoint summary
// (GET /v1/tenants/{tenantId}/task).
func (c *Client) TenantTask(ctx context.Context, tenant string) (*api.Task, error) {
	return c.WaitTenantTask(ctx, tenant, 0)
}

// WaitTenantTask is TenantTask with a long poll: with wait > 0 the server answers once the
// task is at rest (ended, WAITING, PAUSED or INTERRUPTED) or after wait, whichever comes
// first. The request's own deadline is wait plus RequestTimeout.
func (c *Client) WaitTenantTask(ctx context.Context, tenant string, wait time.Duration) (*api.Task, error) {
	var out api.Task
	req := request{method: http.MethodGet, path: tenantPath(tenant, "task"), query: waitQuery(wait), wait: wait}
	if err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// TenantCheckpoint returns the checkpoint of the tenant's latest task
// (GET /v1/tenants/{tenantId}/checkpoint). It is a 404 *Error when there is none.
func (c *Client) TenantCheckpoint(ctx context.Context, tenant string) (*api.Checkpoint, error) {
	var out api.Checkpoint
	req := request{method: http.MethodGet, path: tenantPath(tenant, "checkpoint")}
	if err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RetryTenant retries the tenant's latest task (POST /v1/tenants/{tenantId}/retry). With
// fromCheckpoint it resumes at the stage after the last completed one; without, it restarts
// at stage 0. The choice is always sent explicitly.
func (c *Client) RetryTenant(ctx context.Context, tenant string, fromCheckpoint bool) (*api.Task, error) {
	body, err := json.Marshal(api.RetryBody{FromCheckpoint: &fromCheckpoint})
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set("Content-Type", ContentTypeJSON)
	var out api.Task
	req := request{method: http.MethodPost, path: tenantPath(tenant, "retry"), header: h, body: body}
	if err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PauseTenant pauses the tenant's latest task at its next stage boundary
// (POST /v1/tenants/{tenantId}/pause).
func (c *Client) PauseTenant(ctx context.Context, tenant string) (*api.Task, error) {
	return c.tenantOp(ctx, tenant, "pause")
}

// ResumeTenant resumes the tenant's paused task (POST /v1/tenants/{tenantId}/resume).
func (c *Client) ResumeTenant(ctx context.Context, tenant string) (*api.Task, error) {
	return c.tenantOp(ctx, tenant, "resume")
}

// CancelTenant cancels the tenant's latest task (POST /v1/tenants/{tenantId}/cancel).
func (c *Client) CancelTenant(ctx context.Context, tenant string) (*api.Task, error) {
	return c.tenantOp(ctx, tenant, "cancel")
}

func (c *Client) tenantOp(ctx context.Context, tenant, op string) (*api.Task, error) {
	var out api.Task
	if err := c.do(ctx, request{method: http.MethodPost, path: tenantPath(tenant, op)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Task returns a task by id with its lease and checkpoint summary (GET /v1/tasks/{taskId}).
func (c *Client) Task(ctx context.Context, id string) (*api.Task, error) {
	return c.WaitTask(ctx, id, 0)
}

// WaitTask is Task with a long poll: with wait > 0 the server answers once the task is at
// rest (ended, WAITING, PAUSED or INTERRUPTED) or after wait, whichever comes first. The
// request's own deadline is wait plus RequestTimeout.
func (c *Client) WaitTask(ctx context.Context, id string, wait time.Duration) (*api.Task, error) {
	var out api.Task
	req := request{method: http.MethodGet, path: "/v1/tasks/" + url.PathEscape(id), query: waitQuery(wait), wait: wait}
	if err := c.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Executors lists the executors sharing the server's store, sorted by name, alive or not
// (GET /v1/executors); Self marks the server.
func (c *Client) Executors(ctx context.Context) (*api.ExecutorList, error) {
	var out api.ExecutorList
	if err := c.do(ctx, request{method: http.MethodGet, path: "/v1/executors"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Health calls GET /healthz.
func (c *Client) Health(ctx context.Context) (*api.Health, error) {
	var out api.Health
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
	var p api.Problem
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
	e.Problem = api.Problem{Status: resp.StatusCode, Title: http.StatusText(resp.StatusCode)}
	if detail := strings.Join(strings.Fields(string(raw)), " "); detail != "" {
		const maxDetail = 200
		if r := []rune(detail); len(r) > maxDetail {
			detail = string(r[:maxDetail]) + "…"
		}
		e.Problem.Detail = detail
	}
	return e
}
