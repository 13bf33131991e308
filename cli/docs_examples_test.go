package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// TestDocsCLI fails when docs/cli.md and the command line disagree (issue 37): a command or a
// flag the docs use that the CLI lacks, one the CLI has that the docs never name, an exit
// status or a table header the docs show that the CLI does not give.
//
// What counts as an example:
//   - every line of a ```sh block whose command (after `$ `, variable assignments, or a
//     program piped into it) is `executor ...` or `./executor ...`. In a block with `$ `
//     prompts, the lines up to the next prompt are the output the docs show: a `# exit N`
//     comment is the exit status they claim; else an `error:` line claims a failure (not 0,
//     not 2); else any output claims success (0). The first line of stdout shown, when it is
//     a table header, must be the CLI's (the task statuses left out on both sides: which
//     appear depends on the plan's state); when it is JSON, the CLI must print JSON. A command
//     without output shown must not be a usage error (2). They run in document order against
//     one executor, each once every plan has settled after the one before (ended, or at rest:
//     nothing can progress without an operator), so what they find does not depend on timing.
//   - every usage line (a block without info string starting with `executor `) and every
//     inline code span starting with `executor `: checked against the command tree (the
//     command exists, every flag is one it takes), not run.
//   - every line of the Example of every cobra command: run, and must not be a usage error.
//   - the examples of a usage error in the "Exit status" table: run, and must exit 2.
//   - the "Table columns" table: each object's columns are the header the CLI prints for it.
//   - the tables of the global and serve flags: each flag exists, with the variable and the
//     default the docs give.
//
// Placeholders: a plan id the docs show is the fixture of docPlans, or else (and `01JD7X...`,
// `P`, `ID`, `PLAN_ID`) the plan the last example submitted; `task show`'s id is a task of that
// plan; `--tenant T` is tenant-001; a file the docs name that the repository lacks is a fixture
// of docFixtures; tenants are the docs' own names, which the fixtures carry.
func TestDocsCLI(t *testing.T) {
	t.Parallel()
	lines := readDoc(t)
	fs, prose := fences(lines)
	t.Run("usage lines and inline commands", func(t *testing.T) {
		t.Parallel()
		checkStatic(t, fs, prose)
	})
	t.Run("every command and flag documented", func(t *testing.T) {
		t.Parallel()
		checkDocumented(t, strings.Join(strings.Fields(strings.Join(lines, " ")), " "))
	})
	t.Run("sh examples", func(t *testing.T) {
		t.Parallel()
		runShExamples(t, shExamples(fs))
	})
	t.Run("cobra examples", func(t *testing.T) {
		t.Parallel()
		runCobraExamples(t)
	})
	t.Run("usage errors of the exit status table", func(t *testing.T) {
		t.Parallel()
		checkUsageErrors(t, lines)
	})
	t.Run("flag tables", func(t *testing.T) {
		t.Parallel()
		checkFlagTables(t, lines)
	})
	t.Run("table columns", func(t *testing.T) {
		t.Parallel()
		checkTableColumns(t, lines)
	})
}

// notRun are the commands whose examples are checked against the command tree but not run.
var notRun = map[string]string{
	"executor serve": "runs an executor until signalled: the test's own executor is the one the examples talk to",
	"executor bench": "runs a benchmark of its own, for minutes (docs/performance.md)",
}

// followers are the commands that run until interrupted: the test interrupts them once they
// said on stderr that they follow, and the docs say they then exit 0.
var followers = map[string]string{
	"executor events": "follows the executor's events until Ctrl-C, which exits 0",
}

// notCommands are the inline code spans starting with `executor ` that are not command lines.
var notCommands = map[string]string{
	"executor serving":     "the log line of serve once it listens",
	"executor name in use": "serve's error when a live executor has its --name",
}

// checkStatic checks every usage line and every inline `executor ...` span against the tree.
func checkStatic(t *testing.T, fs []fence, prose []string) {
	t.Helper()
	root := cli.CommandTree()
	lines := synopses(fs)
	require.NotEmpty(t, lines, "no usage line found: the convention changed?")
	for _, s := range codeSpans(prose) {
		if !strings.HasPrefix(s.text, "executor ") {
			continue
		}
		if _, ok := notCommands[s.text]; ok {
			continue
		}
		if cl, ok := parseCommandLine(where(s.line), s.text); ok {
			// "executor X (or executor Y)": the first command
			cl.args = wordsBefore(cl.args, "(or")
			lines = append(lines, cl)
		}
	}
	for _, cl := range lines {
		assert.Empty(t, lineProblem(root, cl.args), "%s: `%s`", cl.where, cl.text)
	}
}

// wordsBefore returns the words before sep (all of them without it).
func wordsBefore(words []string, sep string) []string {
	if i := slices.Index(words, sep); i >= 0 {
		return words[:i]
	}
	return words
}

// checkDocumented checks that docs/cli.md (text, whitespace folded) names every command of
// the tree (`executor plan bulk approve`) and every flag of each (`--page-size`).
func checkDocumented(t *testing.T, text string) {
	t.Helper()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c.HasParent() || c.Name() == "help" {
			return
		}
		assert.True(t, strings.Contains(text, c.CommandPath()), "docs/cli.md never names the command %q", c.CommandPath())
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && f.Name != "help" {
				assert.True(t, strings.Contains(text, "--"+f.Name), "docs/cli.md never names the flag --%s of %q", f.Name, c.CommandPath())
			}
		})
		if c.Name() == "completion" { // cobra's: `executor completion bash|zsh|fish|powershell`
			return
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cli.CommandTree())
}

// docRun is a command line run by a runner: its exit status, stdout and stderr, and its words.
type docRun struct {
	result
	args []string // as run, placeholders replaced
}

// runner runs command lines in-process against an executor of its own, in order, replacing
// the docs' placeholders, and lets every plan settle after each.
type runner struct {
	t       *testing.T
	url     string
	c       *client.Client
	root    *cobra.Command
	files   map[string]string // a file name as the docs write it → the fixture's path
	plans   map[string]string // a file name → the id of the plan last submitted from it
	current string            // the id of the plan last submitted
}

func newRunner(t *testing.T) *runner {
	t.Helper()
	srv := servertest.Start(t)
	r := &runner{t: t, url: srv.URL(), c: client.New(srv.URL(), "", nil), root: cli.CommandTree(),
		files: map[string]string{}, plans: map[string]string{}}
	dir := t.TempDir()
	for _, f := range docFixtures {
		path := filepath.Join(dir, f.file)
		require.NoError(t, os.WriteFile(path, []byte(f.body), 0o600))
		r.files[f.file] = path
	}
	for _, f := range docFixtures {
		if f.submitted {
			res := r.run(commandLine{where: "fixture " + f.file, args: []string{"submit", "-f", f.file, "-o", "json"}})
			requireCode(t, cli.ExitOK, res.result)
		}
	}
	return r
}

// docID is a plan id as the docs show one: a ULID, or one elided (`01JD7X...`, `01JD...`).
var docID = regexp.MustCompile(`01[0-9A-HJKMNP-TV-Z]{24}|01[0-9A-Z]{0,8}\.\.\.`)

// substitute replaces the docs' placeholders of a command line's words.
func (r *runner) substitute(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		prev := ""
		if i > 0 {
			prev = words[i-1]
		}
		switch {
		case w == "P" || w == "ID" || w == "PLAN_ID" || w == "TASK_ID": // a task: of the current plan, below
			w = r.current
		case w == "T" && (prev == "--tenant" || prev == "-t"):
			w = "tenant-001"
		case prev == "-f" || prev == "--file":
			w = r.file(w)
		default:
			w = docID.ReplaceAllStringFunc(w, r.planID)
		}
		out[i] = w
	}
	if cmds, err := commandOf(r.root, out); err == nil && cmds[0].CommandPath() == "executor task show" {
		for i, w := range out {
			if p, err := r.c.PlanTasksPage(context.Background(), w, client.TaskQuery{Limit: 1}); err == nil && len(p.Tasks) > 0 {
				out[i] = p.Tasks[0].TaskID
			}
		}
	}
	return out
}

// planID is the id of the plan playing the part of the docs' id.
func (r *runner) planID(doc string) string {
	if id := r.plans[docPlans[doc]]; id != "" {
		return id
	}
	return r.current
}

// file is the path of a file the docs name: a fixture, else the repository's.
func (r *runner) file(name string) string {
	if path, ok := r.files[name]; ok {
		return path
	}
	if _, err := os.Stat(filepath.Join("..", name)); err == nil {
		return filepath.Join("..", name)
	}
	return name
}

// run runs a command line (a follower until it says it follows), then notes the plan it
// submitted, if any, and waits for every plan to settle.
func (r *runner) run(cl commandLine) docRun {
	r.t.Helper()
	args := r.substitute(cl.args)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr servertest.Buffer
	var errw io.Writer = &stderr
	if cmds, err := commandOf(r.root, args); err == nil && followers[cmds[0].CommandPath()] != "" {
		errw = &onFirstLine{w: &stderr, fn: cancel}
	}
	stdin := ""
	if cl.stdin {
		stdin = stdinPlan
	}
	code := cli.RunWith(ctx, append([]string{"--server", r.url}, args...), strings.NewReader(stdin), cl.env, &stdout, errw)
	r.noteSubmitted(args, r.settle())
	return docRun{result: result{code: code, stdout: stdout.String(), stderr: stderr.String()}, args: args}
}

// onFirstLine calls fn once a complete line was written to w.
type onFirstLine struct {
	w    io.Writer
	fn   func()
	once sync.Once
}

func (o *onFirstLine) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if strings.Contains(string(p), "\n") {
		o.once.Do(o.fn)
	}
	return n, err
}

// noteSubmitted makes the newest plan, when it is new, the current one and the one of the
// file the command line submitted (-f).
func (r *runner) noteSubmitted(args []string, newest string) {
	if newest == "" || newest == r.current {
		return
	}
	r.current = newest
	for i, w := range args {
		if i > 0 && (args[i-1] == "-f" || args[i-1] == "--file") {
			for name, path := range r.files {
				if path == w {
					w = name
				}
			}
			r.plans[strings.TrimPrefix(w, "../")] = newest
		}
	}
}

// settle waits until every plan has ended, is SCHEDULED, or is at rest, and returns the id of
// the newest ("" without any).
func (r *runner) settle() string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		l, err := r.c.Plans(ctx, "", 1000, "")
		require.NoError(r.t, err)
		unsettled := slices.IndexFunc(l.Plans, func(p wire.Plan) bool { return !r.settled(ctx, p) })
		if unsettled < 0 && len(l.Plans) == 0 {
			return ""
		}
		if unsettled < 0 {
			return l.Plans[0].PlanID
		}
		select {
		case <-ctx.Done():
			p := l.Plans[unsettled]
			require.FailNow(r.t, "a plan did not settle", "plan %s %s: %s %v", p.PlanID, p.Name, p.Status, p.Progress)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// settled reports whether p (as listed) has ended, is SCHEDULED, or is at rest, and will stay
// so: at rest, but not a plan the orchestrator is about to move on (every task settled: it
// ends; its current ring's tasks all ended: the ring completes), which the CLI's --wait tells
// apart by reading the plan again a second later.
func (r *runner) settled(ctx context.Context, p wire.Plan) bool {
	r.t.Helper()
	st := plan.Status(p.Status)
	if st.Terminal() || st == plan.Scheduled {
		return true
	}
	rest, err := cli.PlanAtRest(ctx, r.c, p)
	require.NoError(r.t, err)
	pr := p.Progress
	if !rest || st == plan.Running && pr[string(task.Pending)]+pr[string(task.Running)]+pr[string(task.Waiting)]+pr[string(task.Paused)] == 0 {
		return false
	}
	rg := p.Rings
	if st != plan.Running || rg == nil || rg.Waves[rg.Current].State != "running" || rg.Current == len(rg.Waves)-1 {
		return true
	}
	from := 0 // the current ring's tasks are the plan's from..to-1, in ring order
	for _, w := range rg.Waves[:rg.Current] {
		from += w.Tenants
	}
	to := from + rg.Waves[rg.Current].Tenants
	l, err := r.c.PlanTasksPage(ctx, p.PlanID, client.TaskQuery{Limit: to})
	require.NoError(r.t, err)
	return slices.ContainsFunc(l.Tasks[from:min(to, len(l.Tasks))], func(tk wire.Task) bool {
		s := task.Status(tk.Status)
		return s == task.Waiting || s == task.Paused || s == task.Interrupted
	})
}

// skipReason says why a command line is not run, or "".
func (r *runner) skipReason(cl commandLine) string {
	cmds, err := commandOf(r.root, cl.args)
	if err != nil {
		return ""
	}
	return notRun[cmds[0].CommandPath()]
}

// runShExamples runs the docs' ```sh command lines in order and checks each against what the
// docs show.
func runShExamples(t *testing.T, examples []example) {
	t.Helper()
	require.NotEmpty(t, examples, "no example found: the convention changed?")
	r := newRunner(t)
	for _, ex := range examples {
		if p := lineProblem(r.root, ex.args); p != "" {
			assert.Fail(t, "the docs use what the CLI lacks", "%s: `%s`: %s", ex.where, ex.text, p)
			continue
		}
		if why := r.skipReason(ex.commandLine); why != "" {
			t.Logf("%s: not run (%s): `%s`", ex.where, why, ex.text)
			continue
		}
		start := time.Now()
		res := r.run(ex.commandLine)
		t.Logf("%s: exit %d in %s: executor %s", ex.where, res.code, time.Since(start).Round(time.Millisecond), strings.Join(res.args, " "))
		checkExample(t, ex, res)
	}
}

// How the docs claim an exit status (documentedExit).
const (
	claimNone    = iota // nothing shown: only not a usage error
	claimExact          // `# exit N`, or output without an error line (0)
	claimFailure        // an `error:` line: a failure, not a usage error
)

var exitComment = regexp.MustCompile(`^exit (\d+)$`)

// trailingComment is the `# ...` note at the end of an output line the docs show.
var trailingComment = regexp.MustCompile(`\s{2,}#\s*(.*)$`)

// documentedExit returns the exit status the docs claim for ex, and how they claim it.
func documentedExit(ex example) (int, int) {
	notes := []string{ex.comment}
	claim := claimNone
	for _, l := range ex.output {
		if m := trailingComment.FindStringSubmatch(l); m != nil {
			notes = append(notes, m[1])
		}
		switch {
		case strings.HasPrefix(strings.TrimSpace(l), "error:"):
			claim = claimFailure
		case strings.TrimSpace(l) != "" && claim == claimNone:
			claim = claimExact
		}
	}
	for _, n := range notes {
		if m := exitComment.FindStringSubmatch(n); m != nil {
			var code int
			_, _ = fmt.Sscan(m[1], &code)
			return code, claimExact
		}
	}
	return 0, claim
}

// checkExample checks a command line's run against the exit status and the output the docs
// show for it.
func checkExample(t *testing.T, ex example, res docRun) {
	t.Helper()
	msg := fmt.Sprintf("%s: `%s`, run as `executor %s`\nstdout: %s\nstderr: %s",
		ex.where, ex.text, strings.Join(res.args, " "), res.stdout, res.stderr)
	want, claim := documentedExit(ex)
	ok := false
	switch claim {
	case claimExact:
		ok = assert.Equal(t, want, res.code, "the exit status the docs show\n%s", msg)
	case claimFailure:
		ok = assert.NotContains(t, []int{cli.ExitOK, cli.ExitUsage}, res.code, "the docs show a failure\n%s", msg)
	default:
		assert.NotEqual(t, cli.ExitUsage, res.code, "a usage error\n%s", msg)
	}
	if ok {
		checkShownOutput(t, ex, res, msg)
	}
}

// headerLine is a table's header: upper-case words (the columns) apart.
var headerLine = regexp.MustCompile(`^[A-Z][A-Z_ ]*[A-Z]$`)

// columns splits a table line into its cells (two spaces or more apart).
func columns(line string) []string {
	return regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1)
}

// withoutStatuses leaves the task statuses out of a header's columns.
func withoutStatuses(cols []string) []string {
	return slices.DeleteFunc(slices.Clone(cols), func(c string) bool { return slices.Contains(task.Statuses, task.Status(c)) })
}

// checkShownOutput compares the first line of stdout the docs show with the CLI's: the same
// header, or JSON for JSON.
func checkShownOutput(t *testing.T, ex example, res docRun, msg string) {
	t.Helper()
	if ex.piped { // what the docs show is jq's; the CLI's output is jq's input
		if slices.Contains(res.args, "json") {
			assert.True(t, res.stdout == "" || jsonStream(res.stdout), "the CLI's -o json output is not JSON\n%s", msg)
		}
		return
	}
	shown := ""
	for _, l := range ex.output {
		m := trailingComment.FindStringSubmatch(l)
		if m != nil && m[1] == "stderr" || strings.HasPrefix(l, "error:") || strings.HasPrefix(l, "^C") {
			continue
		}
		if shown = strings.TrimSpace(trailingComment.ReplaceAllString(l, "")); shown != "" {
			break
		}
	}
	got := strings.TrimSpace(strings.SplitN(strings.TrimLeft(res.stdout, "\n"), "\n", 2)[0])
	switch {
	case strings.HasPrefix(shown, "{") || strings.HasPrefix(shown, "["):
		assert.True(t, jsonStream(res.stdout), "the docs show JSON\n%s", msg)
	case headerLine.MatchString(shown):
		assert.Equal(t, withoutStatuses(columns(shown)), withoutStatuses(columns(got)), "the table header the docs show (task statuses left out)\n%s", msg)
	}
}

// jsonStream reports whether s is one or more JSON values.
func jsonStream(s string) bool {
	d := json.NewDecoder(strings.NewReader(s))
	n := 0
	for ; ; n++ {
		var v any
		if err := d.Decode(&v); err == io.EOF {
			return n > 0
		} else if err != nil {
			return false
		}
	}
}

// runCobraExamples runs the Example lines of every command: none may be a usage error.
func runCobraExamples(t *testing.T) {
	t.Helper()
	r := newRunner(t)
	lines := cobraExamples(r.root)
	require.NotEmpty(t, lines)
	for _, cl := range lines {
		if p := lineProblem(r.root, cl.args); p != "" {
			assert.Fail(t, "an Example uses what the CLI lacks", "%s: `%s`: %s", cl.where, cl.text, p)
			continue
		}
		if why := r.skipReason(cl); why != "" {
			t.Logf("%s: not run (%s): `%s`", cl.where, why, cl.text)
			continue
		}
		start := time.Now()
		res := r.run(cl)
		t.Logf("%s: exit %d in %s: executor %s", cl.where, res.code, time.Since(start).Round(time.Millisecond), strings.Join(res.args, " "))
		assert.NotEqual(t, cli.ExitUsage, res.code, "%s: `%s` is a usage error\nstderr: %s", cl.where, cl.text, res.stderr)
	}
}

// usageExamples are the command lines of the usage errors the "Exit status" table gives as
// examples (what it writes → a whole command line, and its environment).
var usageExamples = map[string]struct {
	args []string
	env  map[string]string
}{
	"-o yaml":                           {args: []string{"-o", "yaml", "plan", "list"}},
	"-o xml":                            {args: []string{"-o", "xml", "plan", "list"}},
	"-o name":                           {args: []string{"events", "-o", "name"}},
	"-l team":                           {args: []string{"plan", "list", "-l", "team"}},
	"--timeout":                         {args: []string{"submit", "-f", "../examples/hello.yaml", "--timeout", "1m"}},
	"--watch":                           {args: []string{"plan", "show", "01JD0000000000000000000000", "--timeout", "1m"}},
	"--status DONE":                     {args: []string{"plan", "list", "--status", "DONE"}},
	"plan retry --status COMPLETED":     {args: []string{"plan", "retry", "01JD0000000000000000000000", "--status", "COMPLETED"}},
	"plan bulk approve --status FAILED": {args: []string{"plan", "bulk", "approve", "01JD0000000000000000000000", "--status", "FAILED"}},
	"plan tasks --sort age":             {args: []string{"plan", "tasks", "01JD0000000000000000000000", "--sort", "age"}},
	"--limit -1":                        {args: []string{"plan", "list", "--limit", "-1"}},
	"--page-size 0":                     {args: []string{"plan", "tasks", "01JD0000000000000000000000", "--page-size", "0"}},
	"--server":                          {args: []string{"--server", "127.0.0.1:8080", "plan", "list"}},
	"--wait":                            {args: []string{"submit", "-f", "../examples/hello.yaml", "--wait", "--dry-run"}},
	"--dry-run":                         {args: []string{"submit", "-f", "../examples/hello.yaml", "--dry-run", "--wait"}},
	"EXECUTOR_WORKERS":                  {args: []string{"serve", "--addr", "127.0.0.1:0"}, env: map[string]string{"EXECUTOR_WORKERS": "0"}},
}

// checkUsageErrors runs every example of a usage error the "Exit status" table gives (the
// code spans of its row 2): each exits 2. Its other rows are other tests' (cli_test.go).
func checkUsageErrors(t *testing.T, lines []string) {
	t.Helper()
	rows, at := tableAfter(t, lines, "## Exit status")
	dead := deadURL(t) // a command that should have been refused must not reach an executor
	checked := 0
	for i, row := range rows {
		if row[0] != "2" {
			continue
		}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(row[1], -1) {
			ex, ok := usageExamples[m[1]]
			if !assert.True(t, ok, "%s: the usage error `%s`: add the command line it stands for to usageExamples", where(at[i]), m[1]) {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			var stdout, stderr servertest.Buffer
			code := cli.RunWith(ctx, append([]string{"--server", dead}, ex.args...), strings.NewReader(""), ex.env, &stdout, &stderr)
			cancel()
			assert.Equal(t, cli.ExitUsage, code, "%s: `%s` (run as %q, env %v) is a usage error, say the docs\nstderr: %s", where(at[i]), m[1], ex.args, ex.env, stderr.String())
			checked++
		}
	}
	require.Positive(t, checked, "no usage error example found in the Exit status table")
}
