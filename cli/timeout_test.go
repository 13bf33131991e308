package cli_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/wire"
)

// --timeout ends a --wait or --watch that lasts longer with ExitTimeout, naming what it waited
// on and how to follow it; that goes on.
func TestWaitTimeout(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	url := srv.URL()
	file := writePlan(t, "slow", []string{"to-1"}, sleep("bake", "1m"))
	again := writePlan(t, "slow-again", []string{"to-3"}, sleep("bake", "1m"))
	quick := writePlan(t, "quick", []string{"to-quick"}, noop("a"))
	long := submitRequest(t, url, wire.PlanRequest{Name: "long", Stages: []wire.StageRequest{sleep("bake", "1m")}, Tenants: tenantsOf("to-2")})
	waitTenant(t, url, "to-2", "RUNNING")
	tests := []struct {
		name  string
		args  []string
		line  string   // the error line; {plan}: the plan submitted
		again []string // the command run again with -o json; nil: args
	}{
		{"submit --wait", []string{"submit", "-f", file, "--wait", "--timeout", "300ms"},
			`^error: timed out after 300ms waiting for plan ({plan}) \(RUNNING RUNNING=1\); it goes on: executor plan show {plan} --watch$`,
			[]string{"submit", "-f", again, "--wait", "--timeout", "300ms"}},
		{"plan show --watch", []string{"plan", "show", long.PlanID, "--watch", "--timeout", "300ms"},
			`^error: timed out after 300ms waiting for plan ` + long.PlanID + ` \(RUNNING RUNNING=1\); it goes on: executor plan show ` + long.PlanID + ` --watch$`, nil},
		{"status --watch", []string{"status", "--tenant", "to-2", "--watch", "--timeout", "300ms"},
			`^error: timed out after 300ms waiting for tenant to-2's task [0-9A-Z]{26} \(RUNNING at bake \(1/1\)\); it goes on: executor status --tenant to-2 --watch$`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, url, tt.args...)
			requireCode(t, cli.ExitTimeout, r)
			assert.Empty(t, r.stdout, "nothing ended: nothing is printed")
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			last := lines[len(lines)-1]
			re := strings.ReplaceAll(tt.line, "{plan}", "[0-9A-Z]{26}")
			require.Regexp(t, regexp.MustCompile(re), last)
			if m := regexp.MustCompile(`waiting for plan ([0-9A-Z]{26})`).FindStringSubmatch(last); m != nil {
				p := decode[wire.Plan](t, runCLI(t, url, "plan", "show", m[1], "-o", "json").stdout)
				assert.Equal(t, "RUNNING", p.Status, "the plan goes on")
			}

			args := tt.args
			if tt.again != nil {
				args = tt.again
			}
			js := runCLI(t, url, append(args, "-o", "json")...)
			requireCode(t, cli.ExitTimeout, js)
			doc := requireErrorDoc(t, js)
			assert.Equal(t, "timeout", doc.Error.Code)
		})
	}

	t.Run("0 is no limit, and a wait that ends first is not cut", func(t *testing.T) {
		t.Parallel()
		requireCode(t, cli.ExitOK, runCLI(t, url, "submit", "-f", quick, "--wait", "--timeout", "0"))
		requireCode(t, cli.ExitOK, runCLI(t, url, "status", "--tenant", "to-quick", "--watch", "--timeout", "1m"))
	})
}
