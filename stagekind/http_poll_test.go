package stagekind

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
)

// savedProgress is a stage.Progress kept in memory, recording every save.
type savedProgress struct {
	mu    sync.Mutex
	data  json.RawMessage
	saves []json.RawMessage
}

func (p *savedProgress) Saved() json.RawMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.data
}

func (p *savedProgress) Save(_ context.Context, data json.RawMessage) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.data = data
	p.saves = append(p.saves, data)
	return nil
}

// deployAPI is an async deploy API: POST /deploys answers 202 {"id":"d-1"} with a Location;
// GET /deploys/d-1 answers {"state":"pending"} until ready polls, then final.
type deployAPI struct {
	posts, polls atomic.Int32
	ready        int32
	final        string
}

func (d *deployAPI) serve(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/deploys":
			d.posts.Add(1)
			w.Header().Set("Location", "/deploys/d-1")
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte(`{"id":"d-1","state":"pending"}`))
		case r.URL.Path == "/deploys/d-1" && r.Header.Get(FenceHeader) != "":
			if d.polls.Add(1) < d.ready {
				_, _ = w.Write([]byte(`{"state":"pending"}`))
				return
			}
			_, _ = w.Write([]byte(d.final))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// polledRequest is a request of params with progress p, rendering late params as the
// orchestrator does.
func polledRequest(params map[string]any, p stage.Progress) stage.Request {
	req := testRequest(params)
	req.Progress = p
	req.Late = func(field, text string, response any) (string, error) {
		return stage.NewRenderer().RenderLate("params."+field, text, stage.Data{TenantID: req.TenantID, Response: response})
	}
	return req
}

func polledParams(url string, poll map[string]any) map[string]any {
	p := map[string]any{"interval": "100ms", "until": `body.state == "ready"`, "failWhen": `body.state == "failed"`}
	for k, v := range poll {
		p[k] = v
	}
	return map[string]any{"method": "POST", "url": url + "/deploys", "body": `{"version":"v2"}`, "poll": p}
}

func TestHTTPPollUntilReady(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		url  string // poll.url; "" follows Location
	}{
		{"poll.url from the response", "{{.Params.base}}/deploys/{{.Response.body.id}}"},
		{"Location header", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := &deployAPI{ready: 3, final: `{"state":"ready","version":"v2"}`}
			srv := api.serve(t)
			progress := &savedProgress{}
			params := polledParams(srv.URL, map[string]any{"url": tt.url})
			req := polledRequest(params, progress)
			if tt.url != "" { // .Params.base: render it as the orchestrator would, with the late data
				req.Late = func(field, text string, response any) (string, error) {
					return stage.NewRenderer().RenderLate(field, text, stage.Data{Params: map[string]any{"base": srv.URL}, Response: response})
				}
			}
			out, err := NewHTTP(HTTPOptions{}).Run(t.Context(), req)
			require.NoError(t, err)
			assert.JSONEq(t, `{"state":"ready","version":"v2"}`, string(out), "the output is the last poll's body")
			assert.Equal(t, int32(1), api.posts.Load())
			assert.Equal(t, int32(3), api.polls.Load())
			require.Len(t, progress.saves, 1, "the first response is saved once, before polling")
			var first conditionEnv
			require.NoError(t, json.Unmarshal(progress.saves[0], &first))
			assert.Equal(t, http.StatusAccepted, first.Status)
			assert.Equal(t, map[string]any{"id": "d-1", "state": "pending"}, first.Body)
		})
	}
}

// A retry from the checkpoint gets the saved first response: it polls, and never sends the
// first request again.
func TestHTTPPollResumesFromSavedResponse(t *testing.T) {
	t.Parallel()
	api := &deployAPI{ready: 2, final: `{"state":"ready"}`}
	srv := api.serve(t)
	progress := &savedProgress{data: json.RawMessage(`{"status":202,"headers":{"location":"/deploys/d-1"},"body":{"id":"d-1"}}`)}
	out, err := NewHTTP(HTTPOptions{}).Run(t.Context(), polledRequest(polledParams(srv.URL, nil), progress))
	require.NoError(t, err)
	assert.JSONEq(t, `{"state":"ready"}`, string(out))
	assert.Zero(t, api.posts.Load(), "the first request is not sent again")
	assert.Equal(t, int32(2), api.polls.Load())
	assert.Empty(t, progress.saves)
}

func TestHTTPPollEnds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		api      *deployAPI
		poll     map[string]any
		class    stage.Class
		code     int
		forgets  bool // the saved first response is forgotten
		contains string
	}{
		{"failWhen fails at once and forgets the first response", &deployAPI{ready: 1, final: `{"state":"failed"}`}, nil, stage.ClassPermanent, http.StatusOK, true, "failWhen held"},
		{"timeout keeps the first response", &deployAPI{ready: 1000}, map[string]any{"timeout": "350ms"}, stage.ClassTimeout, 0, false, "not done after polling"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := tt.api.serve(t)
			progress := &savedProgress{}
			_, err := NewHTTP(HTTPOptions{}).Run(t.Context(), polledRequest(polledParams(srv.URL, tt.poll), progress))
			se := requireStageError(t, err, tt.class, tt.code)
			assert.Contains(t, se.Message, tt.contains)
			assert.Equal(t, int32(1), tt.api.posts.Load())
			if tt.forgets {
				require.Len(t, progress.saves, 2)
				assert.Nil(t, progress.Saved())
			} else {
				require.Len(t, progress.saves, 1)
				assert.NotNil(t, progress.Saved())
			}
		})
	}
}

// A first response that would fail the stage without poll fails it: nothing is saved, no
// poll is sent.
func TestHTTPPollFirstRequestFails(t *testing.T) {
	t.Parallel()
	srv, got := newServer(t, respondWith(http.StatusServiceUnavailable, "busy"))
	progress := &savedProgress{}
	_, err := NewHTTP(HTTPOptions{}).Run(t.Context(), polledRequest(polledParams(srv.URL, nil), progress))
	requireStageError(t, err, stage.ClassRetryable, http.StatusServiceUnavailable)
	assert.Empty(t, progress.saves)
	assert.Len(t, got, 1)
}

func TestHTTPPollParams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		poll  any
		field string
	}{
		{"not an object", "soon", "poll"},
		{"no until", map[string]any{"interval": "1s"}, "poll.until"},
		{"bad until", map[string]any{"until": "body.state =="}, "poll.until"},
		{"unknown key", map[string]any{"until": "true", "every": "1s"}, "poll.every"},
		{"interval too short", map[string]any{"until": "true", "interval": "1ms"}, "poll.interval"},
		{"timeout not a duration", map[string]any{"until": "true", "timeout": "long"}, "poll.timeout"},
		{"bad method", map[string]any{"until": "true", "method": "BREW"}, "poll.method"},
		{"relative url", map[string]any{"until": "true", "url": "/deploys/1"}, "poll.url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := NewHTTP(HTTPOptions{}).ValidateParams(map[string]any{"url": "https://api.example/deploys", "poll": tt.poll})
			require.ErrorIs(t, err, ErrInvalidParams)
			var fe *stage.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.field, fe.Field)
		})
	}
	require.NoError(t, NewHTTP(HTTPOptions{}).ValidateParams(map[string]any{
		"url": "https://api.example/deploys", "poll": map[string]any{"until": "true", "url": "https://api.example/{{.Response.body.id}}"},
	}), "a templated poll.url is checked when it is rendered")
}
