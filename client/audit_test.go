package client_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/client"
)

// AuditTrail sends the filters set, and only those, as GET /v1/audit's query, and decodes the
// page; an empty page's records are an empty list, not nil.
func TestAuditTrailQuery(t *testing.T) {
	t.Parallel()
	const page = `{"records":[{"id":"01J0000000000000000000REC1","at":"2025-03-01T12:00:05Z","actor":"alice","role":"operate",` +
		`"action":"approve","planId":"01J0000000000000000000PLAN","tenant":"acme","request":{"comment":"canary is green"},` +
		`"result":"applied","outcome":{"status":"PENDING"}}],"nextCursor":"01J0000000000000000000PLAN/17-0"}`
	tests := []struct {
		name    string
		body    string
		q       client.AuditQuery
		want    url.Values
		records int
		next    string
	}{
		{name: "no filter", body: `{"records":[]}`, want: url.Values{}},
		{name: "every filter", body: page,
			q: client.AuditQuery{Plan: "01J0000000000000000000PLAN", Tenant: "acme", Actor: "alice", Action: "bulk-retry", Cursor: "01J/5-0", Limit: 1},
			want: url.Values{"plan": {"01J0000000000000000000PLAN"}, "tenant": {"acme"}, "actor": {"alice"},
				"action": {"bulk-retry"}, "cursor": {"01J/5-0"}, "limit": {"1"}},
			records: 1, next: "01J0000000000000000000PLAN/17-0"},
		{name: "a zero limit is the server's default", body: `{"records":null}`, q: client.AuditQuery{Actor: "anonymous"},
			want: url.Values{"actor": {"anonymous"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, http.StatusOK, "application/json", tc.body)
			got, err := client.New(f.srv.URL, "", nil).AuditTrail(context.Background(), tc.q)
			require.NoError(t, err)
			req := f.last(t)
			assert.Equal(t, http.MethodGet, req.Method)
			assert.Equal(t, "/v1/audit", req.Path)
			sent, err := url.ParseQuery(req.Query)
			require.NoError(t, err)
			assert.Equal(t, tc.want, sent)
			require.NotNil(t, got.Records, "an empty page is an empty list")
			assert.Len(t, got.Records, tc.records)
			assert.Equal(t, tc.next, got.NextCursor)
		})
	}
}

// A record decodes with its actor, role, request, result and outcome.
func TestAuditTrailRecord(t *testing.T) {
	t.Parallel()
	f := newFake(t, http.StatusOK, "application/json", `{"records":[{"id":"01J0000000000000000000REC1",`+
		`"at":"2025-03-01T12:00:05Z","actor":"bob","role":"operate","action":"reject","tenant":"acme",`+
		`"request":{"comment":"not today"},"result":"refused","code":"invalid-transition"}]}`)
	got, err := client.New(f.srv.URL, "", nil).AuditTrail(context.Background(), client.AuditQuery{})
	require.NoError(t, err)
	require.Len(t, got.Records, 1)
	r := got.Records[0]
	assert.Equal(t, "bob", r.Actor)
	assert.Equal(t, "operate", r.Role)
	assert.Equal(t, "reject", r.Action)
	assert.Equal(t, "refused", r.Result)
	assert.Equal(t, "invalid-transition", r.Code)
	assert.Equal(t, map[string]string{"comment": "not today"}, r.Request)
	assert.Equal(t, "2025-03-01T12:00:05Z", r.At.UTC().Format("2006-01-02T15:04:05Z07:00"))
	assert.Empty(t, got.NextCursor)
}

// A 400 is an *Error carrying the problem, its field named.
func TestAuditTrailError(t *testing.T) {
	t.Parallel()
	f := newFake(t, http.StatusBadRequest, "application/problem+json",
		`{"title":"Bad Request","status":400,"detail":"plan: must be a ULID","field":"plan"}`)
	_, err := client.New(f.srv.URL, "", nil).AuditTrail(context.Background(), client.AuditQuery{Plan: "nope"})
	var e *client.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusBadRequest, e.Status)
	assert.Equal(t, "plan", e.Problem.Field)
}
