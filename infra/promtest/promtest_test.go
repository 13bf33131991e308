package promtest_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/promtest"
)

// A gauge the test sets is what Prometheus answers once it scraped it, after a change, and
// after a kill and a restart.
func TestPrometheusScrapesWhatTheTestSets(t *testing.T) {
	t.Parallel()
	exp := promtest.StartExporter(t)
	prom := promtest.Start(t, exp.Addr())
	a := map[string]string{"tenant": "a"}
	exp.Set("tenant_error_ratio", a, 0.5)
	prom.WaitValue(t, `tenant_error_ratio{tenant="a"}`, func(v float64) bool { return v == 0.5 }, 30*time.Second)
	exp.Set("tenant_error_ratio", a, 0.01)
	prom.WaitValue(t, `tenant_error_ratio{tenant="a"}`, func(v float64) bool { return v == 0.01 }, 30*time.Second)

	prom.Kill()
	_, err := prom.Query("up")
	require.Error(t, err, "killed: nothing answers")
	prom.Restart()
	prom.WaitValue(t, `up`, func(v float64) bool { return v == 1 }, 30*time.Second)

	exp.Delete("tenant_error_ratio", a)
	require.Eventually(t, func() bool {
		vals, err := prom.Query(`tenant_error_ratio{tenant="a"}`)
		return err == nil && len(vals) == 0
	}, 30*time.Second, 100*time.Millisecond, "a deleted series goes stale")
}
