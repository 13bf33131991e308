package api_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/wire"
)

// TestTaskStatusesRoute checks that GET /v1/task-statuses lists every status in display
// order with the rules the domain applies.
func TestTaskStatusesRoute(t *testing.T) {
	t.Parallel()
	h := api.NewRouter(app.New(app.Deps{}), api.Options{Logger: slog.New(slog.DiscardHandler), Name: "x"})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/task-statuses", nil))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var got wire.TaskStatusRules
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	require.Len(t, got.Statuses, len(task.Statuses))
	for i, s := range task.Statuses {
		r := got.Statuses[i]
		assert.Equal(t, string(s), r.Status)
		assert.Equal(t, s.Retryable(), r.Retryable, "%s retryable", s)
		assert.Equal(t, s.Cancellable(), r.Cancellable, "%s cancellable", s)
		assert.Equal(t, s.Terminal(), r.Terminal, "%s terminal", s)
		assert.Equal(t, s.Settled(), r.Settled, "%s settled", s)
		assert.Equal(t, s.AtRest(), r.AtRest, "%s at rest", s)
		assert.Equal(t, s.Undoable(), r.Undoable, "%s undoable", s)
		assert.Equal(t, s.Skippable(), r.Skippable, "%s skippable", s)
	}
	assert.Contains(t, rec.Body.String(), `{"status":"INTERRUPTED","terminal":false,"settled":true,"atRest":true,"retryable":true,"cancellable":true,"undoable":true,"skippable":true}`)
}
