package cli_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/wire"
)

// Shell completion asks the executor: plan ids for a plan command's ID and --plan, the tenants
// of the plan a command names for --tenant.
func TestCompletion(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	url := srv.URL()
	file := writeRequest(t, "comp", wire.PlanRequest{Name: "comp", Stages: []wire.StageRequest{noop("a")}, Tenants: tenantsOf("eu-1", "eu-2", "us-1")})
	r := runCLI(t, url, "submit", "-f", file, "--wait", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	p := decode[wire.Plan](t, r.stdout)
	tests := []struct {
		name string
		args []string
		want []string // the completions, before cobra's ":<directive>" line
	}{
		{"a plan's id", []string{"plan", "show", ""}, []string{p.PlanID + "\tcomp (" + p.Status + ")"}},
		{"a plan's id typed in part", []string{"plan", "bulk", "retry", p.PlanID[:4]}, []string{p.PlanID + "\tcomp (" + p.Status + ")"}},
		{"an id that is not a plan's", []string{"plan", "show", "ZZ"}, nil},
		{"a second argument", []string{"plan", "show", p.PlanID, ""}, nil},
		{"--plan", []string{"events", "--plan", ""}, []string{p.PlanID + "\tcomp (" + p.Status + ")"}},
		{"--tenant of the plan given", []string{"plan", "tasks", p.PlanID, "--tenant", "eu"}, []string{"eu-1", "eu-2"}},
		{"--tenant of --plan", []string{"audit", "--plan", p.PlanID, "--tenant", "u"}, []string{"us-1"}},
		{"--tenant without a plan", []string{"status", "--tenant", ""}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, url, append([]string{"__complete"}, tt.args...)...)
			requireCode(t, cli.ExitOK, r)
			lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
			require.NotEmpty(t, lines)
			assert.Equal(t, ":4", lines[len(lines)-1], "no file completion")
			var got []string
			for _, l := range lines[:len(lines)-1] {
				got = append(got, strings.SplitN(l, "\t", 2)[0])
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, strings.SplitN(w, "\t", 2)[0])
			}
			assert.Equal(t, want, got)
			if len(tt.want) > 0 && strings.Contains(tt.want[0], "\t") {
				assert.Equal(t, tt.want[0], lines[0], "the id with the plan's name and status")
			}
		})
	}

	t.Run("the completion script", func(t *testing.T) {
		t.Parallel()
		for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
			r := runCLI(t, url, "completion", shell)
			requireCode(t, cli.ExitOK, r)
			assert.Contains(t, r.stdout, "executor", shell)
		}
	})
}
