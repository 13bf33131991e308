package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

// migrateScript prints to stdout and stderr, the database password it is given among them,
// fails its first attempt and succeeds its second.
const migrateScript = `#!/bin/sh
echo "migrating $EXECUTOR_TENANT_ID with $DB_PASS"
echo "warning: connecting as $DB_PASS is slow" >&2
if [ "$EXECUTOR_ATTEMPT" = 1 ]; then echo "cannot reach the database" >&2; exit 75; fi
echo '{"migrated":true}'
`

// Every attempt of an exec stage has the tails of its stdout and stderr in its ledger entry,
// on the memory store and on Redis: the failed attempt's and the one that succeeded, secrets
// hidden, when one task is read (by tenant or by id), never in a listing; the secret reaches
// no answer, no log and not Redis.
func TestTheLedgerShowsWhatExecStagesPrinted(t *testing.T) {
	t.Parallel()
	const value = "pw-51c0ffee-do-not-leak"
	tests := []struct {
		name  string
		redis bool
	}{{"memory", false}, {"redis", true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, secrets := t.TempDir(), t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(secrets, "db-pass"), []byte(value+"\n"), 0o600))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "migrate.sh"), []byte(migrateScript), 0o755))
			allow, err := stagekind.ParseExecAllow([]string{dir + "/"})
			require.NoError(t, err)
			logs := &servertest.Buffer{}
			cfg := server.Config{ExecAllow: allow, SecretsDir: secrets, Logger: slog.New(slog.NewJSONHandler(logs, nil))}
			var rs *redistest.Server
			if tt.redis {
				rs = redistest.Start(t)
				cfg.RedisURL = rs.URL()
			}
			c := newDGClient(t, servertest.With(t, cfg))

			req := wire.PlanRequest{Name: "migrate", Tenants: []wire.TenantRequest{{ID: "xt-1"}},
				Stages: []wire.StageRequest{{Name: "migrate", Kind: "exec", Retry: &wire.RetryRequest{MaxAttempts: 2, InitialBackoff: "10ms"},
					Params: map[string]any{"command": filepath.Join(dir, "migrate.sh"), "env": map[string]any{"DB_PASS": `{{secret "db-pass"}}`}}}}}
			var p wire.Plan
			require.Equal(t, http.StatusCreated, c.do(http.MethodPost, "/v1/plans", req, &p).StatusCode)
			c.waitCompleted(p.PlanID)

			var answers strings.Builder
			read := func(path string, out any) {
				t.Helper()
				var raw json.RawMessage
				require.Equal(t, http.StatusOK, c.do(http.MethodGet, path, nil, &raw).StatusCode, path)
				answers.Write(raw)
				require.NoError(t, json.Unmarshal(raw, out))
			}
			var byTenant, byID wire.Task
			read("/v1/tenants/xt-1/task", &byTenant)
			read("/v1/tasks/"+byTenant.TaskID, &byID)
			const said = "migrating xt-1 with <secret db-pass>\n"
			const warned = "warning: connecting as <secret db-pass> is slow\n"
			for _, tk := range []wire.Task{byTenant, byID} {
				require.Len(t, tk.Attempts, 2)
				failed, ok := tk.Attempts[0], tk.Attempts[1]
				assert.Equal(t, "failed", failed.Outcome)
				assert.Equal(t, said, failed.Stdout)
				assert.Equal(t, warned+"cannot reach the database\n", failed.Stderr)
				assert.Contains(t, failed.Error, "stderr: "+warned+"cannot reach the database", "the failure's message keeps its tail")
				assert.Equal(t, "succeeded", ok.Outcome)
				assert.Equal(t, said+`{"migrated":true}`+"\n", ok.Stdout)
				assert.Equal(t, warned, ok.Stderr)
			}
			var list wire.TaskList
			read("/v1/plans/"+p.PlanID+"/tasks", &list)
			require.Len(t, list.Tasks, 1)
			for _, a := range list.Tasks[0].Attempts {
				assert.Empty(t, a.Stdout+a.Stderr, "a listing carries no output")
			}
			assert.NotContains(t, answers.String(), value, "no answer holds the secret")
			assert.NotContains(t, logs.String(), value, "no log line holds the secret")
			if rs != nil {
				assert.EqualValues(t, 2, rs.Client().HLen(context.Background(), rediskey.New("").Transcripts(byTenant.TaskID)).Val(),
					"one field per attempt in the task's transcripts hash")
				assert.NotContains(t, redisDump(t, rs.Client()), value, "Redis does not hold the secret")
			}
		})
	}
}
