package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/wire"
)

// -o yaml prints the document -o json prints; -o name the ids of the objects; -o wide the
// table with more columns.
func TestOutputFormats(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	file := writeRequest(t, "formats", wire.PlanRequest{Name: "formats", Labels: map[string]string{"team": "sre", "env": "prod"},
		Stages: []wire.StageRequest{noop("a")}, Tenants: tenantsOf("of-1", "of-2")})
	r := runCLI(t, srv.URL(), "submit", "-f", file, "--wait", "-o", "name")
	requireCode(t, cli.ExitOK, r)
	id := strings.TrimSpace(r.stdout)
	require.Regexp(t, `^[0-9A-Z]{26}$`, id, "submit -o name prints the plan's id alone")
	tasks := decode[wire.TaskList](t, runCLI(t, srv.URL(), "plan", "tasks", id, "-o", "json").stdout)
	require.Len(t, tasks.Tasks, 2)

	t.Run("yaml is the json document", func(t *testing.T) {
		t.Parallel()
		for _, args := range [][]string{
			{"plan", "list"}, {"plan", "show", id}, {"plan", "summary", id}, {"plan", "tasks", id},
			{"plan", "tasks", id, "--page-size", "1"}, {"status", "--tenant", "of-1"}, {"checkpoint", "--tenant", "of-2"},
			{"task", "show", tasks.Tasks[0].TaskID}, {"audit", "--plan", id},
		} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				t.Parallel()
				js := runCLI(t, srv.URL(), append(args, "-o", "json")...)
				requireCode(t, cli.ExitOK, js)
				ym := runCLI(t, srv.URL(), append(args, "-o", "yaml")...)
				requireCode(t, cli.ExitOK, ym)
				var fromJSON, fromYAML any
				require.NoError(t, json.Unmarshal([]byte(js.stdout), &fromJSON))
				require.NoError(t, yaml.Unmarshal([]byte(ym.stdout), &fromYAML), ym.stdout)
				assert.Equal(t, normalise(t, fromJSON), normalise(t, fromYAML))
			})
		}
	})

	t.Run("name", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name string
			args []string
			want []string
		}{
			{"plan list", []string{"plan", "list"}, []string{id}},
			{"plan show", []string{"plan", "show", id}, []string{id}},
			{"plan summary", []string{"plan", "summary", id}, []string{id}},
			{"plan tasks", []string{"plan", "tasks", id}, []string{tasks.Tasks[0].TaskID, tasks.Tasks[1].TaskID}},
			{"plan tasks page by page", []string{"plan", "tasks", id, "--page-size", "1"}, []string{tasks.Tasks[0].TaskID, tasks.Tasks[1].TaskID}},
			{"status", []string{"status", "--tenant", "of-2"}, []string{tasks.Tasks[1].TaskID}},
			{"checkpoint", []string{"checkpoint", "--tenant", "of-1"}, []string{tasks.Tasks[0].TaskID}},
			{"lock", []string{"lock", "--tenant", "of-1"}, []string{"of-1"}},
			{"dry run", []string{"submit", "-f", file, "--dry-run"}, []string{"of-1", "of-2"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				r := runCLI(t, srv.URL(), append(tt.args, "-o", "name")...)
				requireCode(t, cli.ExitOK, r)
				assert.Equal(t, tt.want, strings.Fields(r.stdout))
			})
		}
	})

	t.Run("wide", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name  string
			args  []string
			extra []string // the columns -o wide adds
			cells []string // cells of the first row that only wide shows
		}{
			{"plan list", []string{"plan", "list"}, []string{"LABELS", "FAILURE BUDGET", "MAX CONCURRENCY", "ON FAILURE", "SUBMITTED BY"}, []string{"env=prod,team=sre"}},
			{"plan show", []string{"plan", "show", id}, []string{"LABELS", "FAILURE BUDGET"}, []string{"env=prod,team=sre"}},
			{"status", []string{"status", "--tenant", "of-1"}, []string{"PLAN ID", "EXECUTOR", "UPDATED"}, []string{id}},
			{"plan tasks", []string{"plan", "tasks", id}, []string{"EXECUTOR", "UPDATED"}, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				table := runCLI(t, srv.URL(), tt.args...)
				requireCode(t, cli.ExitOK, table)
				wide := runCLI(t, srv.URL(), append(tt.args, "-o", "wide")...)
				requireCode(t, cli.ExitOK, wide)
				tableLines := strings.Split(table.stdout, "\n")
				wideLines := strings.Split(wide.stdout, "\n")
				require.GreaterOrEqual(t, len(wideLines), 2)
				for _, h := range tt.extra {
					assert.NotContains(t, tableLines[0], h)
					assert.Contains(t, wideLines[0], h)
				}
				assert.True(t, strings.HasPrefix(strings.Fields(wideLines[0])[0], strings.Fields(tableLines[0])[0]))
				for _, c := range tt.cells {
					assert.Contains(t, wideLines[1], c)
				}
			})
		}
	})
}

// normalise is v after a JSON round trip: numbers as float64, whichever decoder read them.
func normalise(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}
