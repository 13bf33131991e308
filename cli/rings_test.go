package cli_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/wire"
)

// plan show prints a rolling plan's rings: each with its size, tenants, state, then and
// budget, the current one marked, a bake's time left; a dry run lists which tenants fall in
// which ring.
func TestPlanShowPrintsTheRings(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	url := srv.URL()
	req := wire.PlanRequest{
		Name:    "rings",
		Stages:  []wire.StageRequest{noop("deploy")},
		Tenants: tenantsOf("rs-1", "rs-2", "rs-3", "rs-4", "rs-5"),
		Waves: []wire.WaveRequest{
			{Name: "first", Size: 1, Bake: "1h", Then: "approve"},
			{Name: "pinned", Size: "20%"},
			{Name: "rest", Size: "rest"},
		},
		Order: "shuffle", Seed: 7,
	}
	req.Tenants[4].Wave = "pinned"
	file := writeRequest(t, "rings", req)

	dry := runCLI(t, url, "submit", "-f", file, "--dry-run", "-o", "json")
	requireCode(t, cli.ExitOK, dry)
	assert.Contains(t, dry.stdout, `"rings"`)
	assert.Contains(t, dry.stdout, `"wave": "pinned"`)

	p := submitJSON(t, url, file)
	require.Eventually(t, func() bool {
		r := runCLI(t, url, "plan", "show", p.PlanID)
		return strings.Contains(r.stdout, "baking")
	}, 10*time.Second, 20*time.Millisecond)
	r := runCLI(t, url, "plan", "show", p.PlanID)
	requireCode(t, cli.ExitOK, r)
	assert.Contains(t, r.stdout, "rings (order shuffle, seed 7):")
	lines := strings.Split(r.stdout, "\n")
	var ringLines []string
	for _, l := range lines {
		if strings.HasPrefix(l, "> ") || strings.HasPrefix(l, "  ") && strings.Contains(l, "tenant(s)") {
			ringLines = append(ringLines, l)
		}
	}
	require.Len(t, ringLines, 3, r.stdout)
	assert.Regexp(t, `^> 0 first\s+1\s+1 tenant\(s\)\s+baking\s+then approve budget 0\s+bake 1h0m0s \([\dhms.]+ left\)`, ringLines[0])
	assert.Regexp(t, `^  1 pinned\s+20%\s+1 tenant\(s\)\s+pending`, ringLines[1], "rs-5 pinned; 20 % of 5 is 1")
	assert.Regexp(t, `^  2 rest\s+rest\s+3 tenant\(s\)\s+pending`, ringLines[2])
}
