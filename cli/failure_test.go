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

// errorDoc is the error document -o json and -o yaml write to stderr.
type errorDoc struct {
	Error struct {
		Status  int                 `json:"status" yaml:"status"`
		Title   string              `json:"title" yaml:"title"`
		Detail  string              `json:"detail" yaml:"detail"`
		Code    string              `json:"code" yaml:"code"`
		Field   string              `json:"field" yaml:"field"`
		Fields  []wire.FieldProblem `json:"fields" yaml:"fields"`
		Tenants []string            `json:"tenants" yaml:"tenants"`
		Message string              `json:"message" yaml:"message"`
		Exit    int                 `json:"exit" yaml:"exit"`
		Hints   []string            `json:"hints" yaml:"hints"`
	} `json:"error" yaml:"error"`
}

// requireErrorDoc decodes the error document of a failure under -o json: the last line of
// stderr (notes may come before it: submit --wait's), whose exit is the run's.
func requireErrorDoc(t *testing.T, r result) errorDoc {
	t.Helper()
	require.True(t, strings.HasSuffix(r.stderr, "\n"), "a line: %q", r.stderr)
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	for _, l := range lines[:len(lines)-1] {
		require.False(t, strings.HasPrefix(l, "{"), "one error document, last: %q", r.stderr)
	}
	var doc errorDoc
	dec := json.NewDecoder(strings.NewReader(lines[len(lines)-1]))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&doc), "stderr: %s", r.stderr)
	assert.Equal(t, r.code, doc.Error.Exit, "the document's exit is the run's")
	return doc
}

// Under -o json (and yaml) a failure is one error document on stderr, with the exit status
// unchanged; the table output keeps its error line.
func TestErrorDocuments(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	long := writePlan(t, "busy", []string{"ed-1"}, sleep("bake", "1m"))
	requireCode(t, cli.ExitOK, runCLI(t, srv.URL(), "submit", "-f", long))
	again := writePlan(t, "again", []string{"ed-1", "ed-2"}, noop("a"))
	tests := []struct {
		name   string
		server string
		args   []string
		exit   int
		check  func(t *testing.T, d errorDoc)
	}{
		{"a remote 404", "", []string{"status", "--tenant", "nobody"}, cli.ExitFailure, func(t *testing.T, d errorDoc) {
			assert.Equal(t, 404, d.Error.Status)
			assert.Equal(t, "not-found", d.Error.Code)
			assert.Equal(t, "Not Found", d.Error.Title)
			assert.True(t, strings.HasPrefix(d.Error.Message, "404 Not Found"), d.Error.Message)
		}},
		{"a bad field", "", []string{"status", "--tenant", "bad:id{x}"}, cli.ExitFailure, func(t *testing.T, d errorDoc) {
			assert.Equal(t, 400, d.Error.Status)
			assert.Equal(t, "invalid-input", d.Error.Code)
			assert.Equal(t, "tenantId", d.Error.Field)
			assert.NotEmpty(t, d.Error.Detail)
		}},
		{"a conflict names the tenants", "", []string{"submit", "-f", again}, cli.ExitFailure, func(t *testing.T, d errorDoc) {
			assert.Equal(t, 409, d.Error.Status)
			assert.Equal(t, "tenant-conflict", d.Error.Code)
			assert.Equal(t, []string{"ed-1"}, d.Error.Tenants)
		}},
		{"a usage error", "", []string{"plan", "lsit"}, cli.ExitUsage, func(t *testing.T, d errorDoc) {
			assert.Equal(t, "usage", d.Error.Code)
			assert.Zero(t, d.Error.Status)
			assert.Equal(t, `unknown command "lsit" for "executor plan" (did you mean "list"?)`, d.Error.Message)
			assert.Equal(t, []string{"Run 'executor plan --help' for usage."}, d.Error.Hints)
		}},
		{"an unreachable executor", deadURL(t), []string{"plan", "list"}, cli.ExitFailure, func(t *testing.T, d errorDoc) {
			assert.Equal(t, "unreachable", d.Error.Code)
			require.Len(t, d.Error.Hints, 1)
			assert.True(t, strings.HasPrefix(d.Error.Hints[0], "is an executor serving at "), d.Error.Hints[0])
			assert.NotContains(t, d.Error.Message, "is an executor serving", "the hint is a hint of its own")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url := srv.URL()
			if tt.server != "" {
				url = tt.server
			}
			table := runCLI(t, url, tt.args...)
			requireCode(t, tt.exit, table)
			assert.True(t, strings.HasPrefix(table.stderr, "error: "), "the table output keeps its error line: %q", table.stderr)

			js := runCLI(t, url, append(tt.args, "-o", "json")...)
			requireCode(t, tt.exit, js)
			assert.Empty(t, js.stdout)
			doc := requireErrorDoc(t, js)
			assert.Equal(t, strings.TrimSuffix(strings.SplitN(strings.TrimPrefix(table.stderr, "error: "), "\n", 2)[0], "; "+strings.Join(doc.Error.Hints, "")),
				doc.Error.Message, "the message is the table's error line")
			tt.check(t, doc)

			ym := runCLI(t, url, append(tt.args, "-o", "yaml")...)
			requireCode(t, tt.exit, ym)
			var fromYAML errorDoc
			require.NoError(t, yaml.Unmarshal([]byte(ym.stderr), &fromYAML), ym.stderr)
			assert.Equal(t, doc, fromYAML, "-o yaml writes the same document")
		})
	}
}

// A mistyped command is reported as one, whatever flags follow it, with the command meant;
// a mistyped flag with the flag meant.
func TestDidYouMean(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a command before a flag of another", []string{"sumbit", "-f", "x.yaml"}, `unknown command "sumbit" for "executor" (did you mean "submit"?)`},
		{"a command alone", []string{"sumbit"}, `unknown command "sumbit" for "executor" (did you mean "submit"?)`},
		{"a subcommand", []string{"plan", "lsit"}, `unknown command "lsit" for "executor plan" (did you mean "list"?)`},
		{"a subcommand before a flag", []string{"plan", "lsit", "--status", "RUNNING"}, `unknown command "lsit" for "executor plan" (did you mean "list"?)`},
		{"a nested subcommand", []string{"plan", "bulk", "aprove", "x"}, `unknown command "aprove" for "executor plan bulk" (did you mean "approve"?)`},
		{"nothing near", []string{"deploy", "-f", "x.yaml"}, `unknown command "deploy" for "executor"`},
		{"a flag", []string{"status", "--tenat", "a"}, `unknown flag: --tenat (did you mean --tenant?)`},
		{"a global flag", []string{"plan", "list", "--sever", "http://x"}, `unknown flag: --sever (did you mean --server?)`},
		{"a flag cut short", []string{"plan", "tasks", "x", "--page"}, `unknown flag: --page (did you mean --page-size?)`},
		{"a flag nothing near", []string{"status", "--zzzzzz"}, `unknown flag: --zzzzzz`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, srv.URL(), tt.args...)
			requireCode(t, cli.ExitUsage, r)
			line, _, _ := strings.Cut(r.stderr, "\n")
			assert.Equal(t, "error: "+tt.want, line)
		})
	}
}
