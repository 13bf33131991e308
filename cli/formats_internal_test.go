package cli

import (
	"bytes"
	"errors"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/wire"
)

func TestWriteYAML(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"the JSON's field order, names and numbers", struct {
			Z int     `json:"zeta"`
			A float64 `json:"alpha"`
			M int64   `json:"ms"`
		}{1, 2.5, 1732000000000}, "zeta: 1\nalpha: 2.5\nms: 1732000000000\n"},
		{"strings YAML would read as something else are quoted", map[string]string{"a": "true", "b": "012", "c": "null", "d": "-", "e": ""},
			"a: \"true\"\nb: \"012\"\nc: \"null\"\nd: '-'\ne: \"\"\n"},
		{"null, empty and nested", map[string]any{"n": nil, "l": []int{}, "m": map[string]int{}, "s": []any{1, map[string]bool{"ok": true}}},
			"l: []\nm: {}\nn: null\ns:\n  - 1\n  - ok: true\n"},
		{"a multi-line string", map[string]string{"out": "a\nb"}, "out: |-\n  a\n  b\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			require.NoError(t, writeYAML(&b, tt.v))
			assert.Equal(t, tt.want, b.String())
		})
	}
}

func TestObjectNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    any
		want []string
	}{
		{"a plan", &wire.Plan{PlanID: "P"}, []string{"P"}},
		{"a plan, not a pointer", wire.Plan{PlanID: "P"}, []string{"P"}},
		{"plans", &wire.PlanList{Plans: []wire.Plan{{PlanID: "P1"}, {PlanID: "P2"}}}, []string{"P1", "P2"}},
		{"no plans", &wire.PlanList{}, []string{}},
		{"a plan retry", &wire.PlanRetry{Plan: wire.Plan{PlanID: "P"}}, []string{"P"}},
		{"a bulk action", &wire.BulkResult{PlanID: "P"}, []string{"P"}},
		{"a summary", &wire.PlanSummary{PlanID: "P"}, []string{"P"}},
		{"a task", &wire.Task{TaskID: "T", TenantID: "t"}, []string{"T"}},
		{"tasks", &wire.TaskList{Tasks: []wire.Task{{TaskID: "T1"}, {TaskID: "T2"}}}, []string{"T1", "T2"}},
		{"a checkpoint", &wire.Checkpoint{TaskID: "T", TenantID: "t"}, []string{"T"}},
		{"a lock", &wire.TenantLock{TenantID: "t", TaskID: "T"}, []string{"t"}},
		{"an unlock", &wire.TenantUnlock{TenantID: "t"}, []string{"t"}},
		{"a dry run", &wire.DryRun{Tenants: []wire.TenantPreview{{TenantID: "a"}, {TenantID: "b"}}}, []string{"a", "b"}},
		{"executors", &wire.ExecutorList{Executors: []wire.Executor{{Name: "e"}}}, []string{"e"}},
		{"audit records", &wire.AuditPage{Records: []wire.AuditRecord{{ID: "r"}}}, []string{"r"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := objectNames(tt.v)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := objectNames(struct{}{})
	assert.Error(t, err, "an object without an id")
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"tenant", "tenant", 0}, {"tenat", "tenant", 1}, {"sumbit", "submit", 2},
		{"lsit", "list", 2}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"héllo", "hello", 1},
	}
	for _, tt := range tests {
		t.Run(tt.a+"→"+tt.b, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, editDistance(tt.a, tt.b))
			assert.Equal(t, tt.want, editDistance(tt.b, tt.a))
		})
	}
}

func TestSuggestFlag(t *testing.T) {
	t.Parallel()
	flags := func(t *testing.T) *pflag.FlagSet { // one each: VisitAll sorts the set in place
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		fs.String("tenant", "", "")
		fs.String("page-size", "", "")
		fs.String("status", "", "")
		fs.String("secret", "", "")
		require.NoError(t, fs.MarkHidden("secret"))
		return fs
	}
	tests := []struct{ typed, want string }{
		{"tenat", "tenant"}, {"TENANT", "tenant"}, {"page", "page-size"}, {"stats", "status"},
		{"secre", ""}, {"p", ""}, {"zzzzzz", ""},
	}
	for _, tt := range tests {
		t.Run(tt.typed, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, suggestFlag(flags(t), tt.typed))
		})
	}
}

func TestLabelFlag(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      []string
		want    map[string]string
		wantErr bool
	}{
		{"none", nil, nil, false},
		{"pairs", []string{"team=sre", "env=prod"}, map[string]string{"team": "sre", "env": "prod"}, false},
		{"a value with =", []string{"q=a=b"}, map[string]string{"q": "a=b"}, false},
		{"an empty value", []string{"team="}, map[string]string{"team": ""}, false},
		{"the same pair twice", []string{"team=sre", "team=sre"}, map[string]string{"team": "sre"}, false},
		{"no =", []string{"team"}, nil, true},
		{"no key", []string{"=sre"}, nil, true},
		{"a key with two values", []string{"team=sre", "team=core"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := labelFlag(tt.in)
			if tt.wantErr {
				var ue *usageError
				require.ErrorAs(t, err, &ue)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestTaskProgressLine(t *testing.T) {
	t.Parallel()
	stages := []wire.StageRef{{Name: "a"}, {Name: "b"}, {Name: "deploy"}, {Name: "d"}}
	tests := []struct {
		name  string
		task  wire.Task
		width int
		want  string
	}{
		{"half way", wire.Task{Status: "RUNNING", Stages: stages, CurrentStage: 2, CurrentStageName: "deploy", Attempt: 1},
			0, "RUNNING    [##########----------]  50%  2/4 stages  deploy (3/4)  attempt 1"},
		{"cut to the width", wire.Task{Status: "RUNNING", Stages: stages, CurrentStage: 2, CurrentStageName: "deploy", Attempt: 1},
			30, "RUNNING    [##########-------"},
		{"no stages", wire.Task{Status: "PENDING", Attempt: 1}, 0,
			"PENDING    [--------------------]   0%  0/0 stages  " + taskStage(wire.Task{}) + "  attempt 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, taskProgressLine(tt.task, tt.width))
		})
	}
}

// An error document carries the problem of the remote error a failure reports, even wrapped
// in an exitError; a lost executor keeps its own code.
func TestFailureDocument(t *testing.T) {
	t.Parallel()
	remote := &client.Error{Status: 404, Problem: wire.Problem{Type: wire.ProblemNotFound, Title: "Not Found", Detail: "no plan", Status: 404}}
	tests := []struct {
		name string
		f    failure
		want errorBody
	}{
		{"a remote error", failure{exit: ExitFailure, line: "404 Not Found: no plan", kind: kindFailed, err: remote},
			errorBody{Status: 404, Title: "Not Found", Detail: "no plan", Code: "not-found", Message: "404 Not Found: no plan", Exit: 1}},
		{"wrapped", failure{exit: ExitFailure, line: "x", kind: kindFailed, err: &exitError{code: 1, msg: "x", cause: remote}},
			errorBody{Status: 404, Title: "Not Found", Detail: "no plan", Code: "not-found", Message: "x", Exit: 1}},
		{"a lost executor", failure{exit: ExitFailure, line: "x", kind: kindLost, err: &exitError{code: 1, msg: "x", kind: kindLost, cause: remote}},
			errorBody{Status: 404, Title: "Not Found", Detail: "no plan", Code: kindLost, Message: "x", Exit: 1}},
		{"not a remote error", failure{exit: ExitTimeout, line: "timed out", hints: []string{"h"}, kind: kindTimeout, err: errors.New("timed out")},
			errorBody{Code: kindTimeout, Message: "timed out", Exit: ExitTimeout, Hints: []string{"h"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, errorDoc{Error: tt.want}, tt.f.document())
		})
	}
}

func TestOutputIn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"none", []string{"sumbit", "-f", "x.yaml"}, OutputTable},
		{"after a mistyped command", []string{"sumbit", "-f", "x.yaml", "-o", "json"}, OutputJSON},
		{"joined", []string{"status", "--tenat", "x", "-ojson"}, OutputJSON},
		{"with =", []string{"status", "--output=yaml"}, OutputYAML},
		{"the last wins", []string{"-o", "yaml", "x", "--output", "json"}, OutputJSON},
		{"unknown format", []string{"x", "-o", "xml"}, OutputTable},
		{"after --", []string{"x", "--", "-o", "json"}, OutputTable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, outputIn(tc.args, OutputTable))
		})
	}
}
