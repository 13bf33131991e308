package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// Executors sharing a Redis with different secrets: a plan whose params read a secret runs
// only where it can be read. The executor without --secrets-dir claims none of its tasks
// (without that check 20 of these 40 tasks FAILED there: "no secrets on this executor").
func TestTasksReadingASecretRunOnlyWhereItCanBeRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "api-token"), []byte("tok-mixed\n"), 0o600))
	var wrong atomic.Int64
	tg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok-mixed" {
			wrong.Add(1)
		}
		time.Sleep(100 * time.Millisecond) // long enough that the other executor's dispatch loop sees the queue too
	}))
	t.Cleanup(tg.Close)
	rs := redistest.Start(t)
	with := newDGClient(t, servertest.With(t, server.Config{RedisURL: rs.URL(), Name: "with-secrets", SecretsDir: dir, Workers: 2, Logger: dgLogger()}))
	newDGClient(t, servertest.With(t, server.Config{RedisURL: rs.URL(), Name: "without", Logger: dgLogger()}))

	req := wire.PlanRequest{Name: "mixed-secrets", MaxConcurrency: 8, Stages: []wire.StageRequest{{Name: "deploy", Kind: "http",
		Params: map[string]any{"url": tg.URL + "/deploy", "headers": map[string]any{"Authorization": `Bearer {{secret "api-token"}}`}}}}}
	for i := range 40 {
		req.Tenants = append(req.Tenants, wire.TenantRequest{ID: fmt.Sprintf("ms-%02d", i)})
	}
	var p wire.Plan
	require.Equal(t, http.StatusCreated, with.do(http.MethodPost, "/v1/plans", req, &p).StatusCode)
	with.waitCompleted(p.PlanID)
	for _, tk := range with.planTasks(p.PlanID) {
		assert.Equal(t, "COMPLETED", tk.Status, tk.TenantID)
		assert.Equal(t, "with-secrets", tk.Executor, "%s ran where its secret can be read", tk.TenantID)
	}
	assert.Zero(t, wrong.Load(), "every call carried the secret")
}
