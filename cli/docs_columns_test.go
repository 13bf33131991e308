package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// tableSource says how the check of the "Table columns" table of docs/cli.md sees an object:
// the command that prints it and which header lines of its output hold its columns.
type tableSource struct {
	object string
	args   []string
	header int    // the index of its header line among the output's (-1: the last)
	matrix bool   // every header line, the first cut to its first column (task statuses follow it)
	none   string // why the object has no header line
}

// columnSources are the objects of the table, in the order they are checked (unlock, which
// interrupts c-run, after what needs it running). ids are the fixtures' plan ids by file.
func columnSources(ids map[string]string) []tableSource {
	return []tableSource{
		{object: "plan", args: []string{"plan", "show", ids["mixed.yaml"]}},
		{object: "task", args: []string{"status", "--tenant", "c-gate"}},
		{object: "plan's tasks", args: []string{"plan", "tasks", ids["mixed.yaml"]}},
		{object: "plan summary", args: []string{"plan", "summary", ids["mixed.yaml"]}, matrix: true},
		{object: "bulk action", args: []string{"plan", "bulk", "retry", ids["old.yaml"]}},
		{object: "event", none: "one line per event, no header"},
		{object: "checkpoint", args: []string{"checkpoint", "--tenant", "c-gate"}},
		{object: "dry run", args: []string{"submit", "-f", "dry.yaml", "--dry-run"}},
		{object: "bulk retry", args: []string{"plan", "retry", ids["old.yaml"]}, header: -1},
		{object: "lock", args: []string{"lock", "--tenant", "c-run"}},
		{object: "audit record", args: []string{"audit"}},
		{object: "unlock", args: []string{"unlock", "--tenant", "c-run"}},
	}
}

// checkTableColumns checks that each object's columns in the "Table columns" table are the
// header the CLI prints for it, on plans that have every section of a table (a failed task,
// one at a gate, one running, a skipped retry).
func checkTableColumns(t *testing.T, lines []string) {
	t.Helper()
	rows, at := tableAfter(t, lines, "Table columns:")
	documented := map[string][]string{}
	line := map[string]int{}
	for i, row := range rows {
		documented[row[0]] = documentedColumns(row[1], documented)
		line[row[0]] = at[i]
	}
	url, ids, dir := columnsExecutor(t)
	sources := columnSources(ids)
	for _, src := range sources {
		want, ok := documented[src.object]
		if !assert.True(t, ok, "docs/cli.md's Table columns no longer lists %q: drop it from columnSources", src.object) {
			continue
		}
		wh := where(line[src.object])
		if src.none != "" {
			assert.Empty(t, want, "%s: %s has no header (%s)", wh, src.object, src.none)
			continue
		}
		args := slices.Clone(src.args)
		if args[0] == "submit" {
			args[2] = filepath.Join(dir, args[2])
		}
		r := runCLI(t, url, args...)
		requireCode(t, cli.ExitOK, r)
		assert.Equal(t, want, headerColumns(t, r.stdout, src), "%s: the columns of %s, printed by `executor %s`:\n%s", wh, src.object, strings.Join(args, " "), r.stdout)
	}
	for object := range documented {
		assert.True(t, slices.ContainsFunc(sources, func(s tableSource) bool { return s.object == object }),
			"%s: Table columns lists %q: add the command that prints it to columnSources", where(line[object]), object)
	}
}

var (
	codeSpan   = regexp.MustCompile("`([^`]+)`")
	columnName = regexp.MustCompile(`^[A-Z][A-Z_ ]*[A-Z]$`)
	asWithout  = regexp.MustCompile(`^as (.+?), without (.*)$`)
)

// documentedColumns reads the columns a cell of the table lists: its upper-case code spans
// outside parentheses and before "; then" (what follows the table); "as X, without A and B"
// is X's columns but A and B.
func documentedColumns(cell string, known map[string][]string) []string {
	cell = withoutParens(cell)
	cell, _, _ = strings.Cut(cell, "; then")
	var cols []string
	for _, m := range codeSpan.FindAllStringSubmatch(cell, -1) {
		if columnName.MatchString(m[1]) {
			cols = append(cols, m[1])
		}
	}
	if m := asWithout.FindStringSubmatch(strings.TrimSpace(cell)); m != nil {
		return slices.DeleteFunc(slices.Clone(known[m[1]]), func(c string) bool { return slices.Contains(cols, c) })
	}
	return cols
}

// withoutParens removes the parenthesized parts of s (nested ones included).
func withoutParens(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// headerColumns returns the columns of the header lines src names in stdout.
func headerColumns(t *testing.T, stdout string, src tableSource) []string {
	t.Helper()
	var headers [][]string
	for _, l := range strings.Split(stdout, "\n") {
		if l = strings.TrimSpace(l); headerLine.MatchString(l) {
			headers = append(headers, columns(l))
		}
	}
	require.NotEmpty(t, headers, "no header line in:\n%s", stdout)
	if !src.matrix {
		if src.header < 0 {
			return headers[len(headers)-1]
		}
		return headers[src.header]
	}
	for _, c := range headers[0][1:] {
		assert.Contains(t, task.Statuses, task.Status(c), "a column of the summary's matrix after STAGE is a task status")
	}
	cols := headers[0][:1]
	for _, h := range headers[1:] {
		cols = append(cols, h...)
	}
	return cols
}

// columnsExecutor starts an executor with the column fixtures submitted and waits until the
// mixed plan has a failed task, one at its gate and one running; it returns its URL, the plan
// ids by file, and the fixtures' directory.
func columnsExecutor(t *testing.T) (string, map[string]string, string) {
	t.Helper()
	url := servertest.Start(t).URL()
	dir := t.TempDir()
	ids := map[string]string{}
	c := client.New(url, "", nil)
	for _, f := range columnFixtures {
		path := filepath.Join(dir, f.file)
		require.NoError(t, os.WriteFile(path, []byte(f.body), 0o600))
		if f.file == "dry.yaml" {
			continue
		}
		if f.file == "new.yaml" { // once c-old's task in old ended
			waitPlanEnded(t, c, ids["old.yaml"])
		}
		r := runCLI(t, url, "submit", "-f", path, "-o", "json")
		requireCode(t, cli.ExitOK, r)
		ids[f.file] = decode[wire.Plan](t, r.stdout).PlanID
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		s, err := c.Summary(ctx, ids["mixed.yaml"])
		require.NoError(t, err)
		if len(s.FailureClasses) > 0 && len(s.Gates) > 0 && len(s.Slowest) > 0 {
			return url, ids, dir
		}
		select {
		case <-ctx.Done():
			require.FailNow(t, "the mixed plan did not reach a failed, a waiting and a running task", "%+v", s)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// waitPlanEnded waits until the plan has ended.
func waitPlanEnded(t *testing.T, c *client.Client, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		p, err := c.Plan(ctx, id, time.Second)
		require.NoError(t, err)
		if p.Status == "COMPLETED" || p.Status == "FAILED" || p.Status == "CANCELLED" {
			return
		}
	}
}
