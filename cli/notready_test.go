package cli_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
)

// Against an executor that has not reached Redis since it started, the reading commands fail
// (exit 1) with the executor's 503 and its reason, never with a 404 or an empty list.
func TestReadsOfAnExecutorThatNeverReachedRedis(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	rs.Kill()
	url := servertest.With(t, server.Config{RedisURL: rs.URL(), LeaseTTL: 2 * time.Second}).URL()
	tests := []struct {
		name string
		args []string
	}{
		{name: "status", args: []string{"status", "--tenant", "tenant-a"}},
		{name: "checkpoint", args: []string{"checkpoint", "--tenant", "tenant-a"}},
		{name: "plan list", args: []string{"plan", "list"}},
		{name: "plan list as json", args: []string{"plan", "list", "-o", "json"}},
		{name: "plan show", args: []string{"plan", "show", "01JD0000000000000000000000"}},
		{name: "plan tasks", args: []string{"plan", "tasks", "01JD0000000000000000000000"}},
		{name: "task show", args: []string{"task", "show", "01JD0000000000000000000000"}},
		{name: "lock", args: []string{"lock", "--tenant", "tenant-a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, url, tt.args...)
			requireCode(t, cli.ExitFailure, r)
			requireErrorLine(t, r)
			assert.Empty(t, r.stdout)
			if slices.Contains(tt.args, "json") { // the error document: its message is the error line's
				doc := requireErrorDoc(t, r)
				assert.Equal(t, 503, doc.Error.Status)
				assert.Equal(t, "unavailable", doc.Error.Code)
				r.stderr = "error: " + doc.Error.Message
			}
			assert.True(t, strings.HasPrefix(r.stderr, "error: 503 Service Unavailable: "), "stderr: %s", r.stderr)
			assert.Contains(t, r.stderr, "has not reached Redis since it started")
			assert.Contains(t, r.stderr, "(reason: redis not reached yet since start: ")
			assert.Contains(t, r.stderr, "connection refused", "the reason names Redis's error")
		})
	}
}
