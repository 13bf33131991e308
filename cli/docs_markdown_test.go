package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

// Reading docs/cli.md for docs_examples_test.go: its fenced blocks, inline code, tables, and
// the shell command lines in them.

// cliDoc is the page the tests check, from this package's directory.
var cliDoc = filepath.Join("..", "docs", "cli.md")

// readDoc returns the lines of docs/cli.md.
func readDoc(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(cliDoc)
	require.NoError(t, err)
	return strings.Split(string(b), "\n")
}

// where names line i (0-based) of docs/cli.md in a failure.
func where(i int) string { return fmt.Sprintf("docs/cli.md:%d", i+1) }

// fence is a fenced code block: its info string and its lines, the fence's indentation removed.
type fence struct {
	lang  string
	first int // index of its first line in the page
	lines []string
}

var fenceLine = regexp.MustCompile("^(\\s*)```(\\S*)\\s*$")

// fences returns the page's fenced blocks, and the page with their lines blanked (the prose).
func fences(lines []string) ([]fence, []string) {
	var out []fence
	prose := append([]string(nil), lines...)
	var cur *fence
	indent := ""
	for i, l := range lines {
		m := fenceLine.FindStringSubmatch(l)
		switch {
		case cur == nil && m != nil:
			cur, indent = &fence{lang: m[2], first: i + 1}, m[1]
			prose[i] = ""
		case cur != nil && m != nil:
			out = append(out, *cur)
			cur = nil
			prose[i] = ""
		case cur != nil:
			cur.lines = append(cur.lines, strings.TrimPrefix(l, indent))
			prose[i] = ""
		}
	}
	return out, prose
}

// span is an inline code span of the prose.
type span struct {
	line int
	text string
}

// codeSpans returns the prose's inline code spans (single backticks; a span may wrap lines).
func codeSpans(prose []string) []span {
	text := strings.Join(prose, "\n")
	var out []span
	for _, loc := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatchIndex(text, -1) {
		out = append(out, span{
			line: strings.Count(text[:loc[0]], "\n"),
			text: strings.Join(strings.Fields(text[loc[2]:loc[3]]), " "),
		})
	}
	return out
}

// tableAfter returns the cells of the Markdown table that follows the first line starting
// with marker (header and separator rows left out), and the index of each row's line.
func tableAfter(t *testing.T, lines []string, marker string) (rows [][]string, at []int) {
	t.Helper()
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, marker) {
			start = i
			break
		}
	}
	require.GreaterOrEqual(t, start, 0, "docs/cli.md has no line starting with %q", marker)
	i := start + 1
	for i < len(lines) && !strings.HasPrefix(lines[i], "|") {
		i++
	}
	for n := 0; i < len(lines) && strings.HasPrefix(lines[i], "|"); i, n = i+1, n+1 {
		if n >= 2 { // past the header and the separator
			rows = append(rows, tableCells(lines[i]))
			at = append(at, i)
		}
	}
	require.NotEmpty(t, rows, "no table after %q in docs/cli.md", marker)
	return rows, at
}

// tableCells splits a table row on the pipes outside code spans.
func tableCells(row string) []string {
	var cells []string
	var cell strings.Builder
	code := false
	for _, r := range strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(row), "|"), "|") {
		switch {
		case r == '`':
			code = !code
			cell.WriteRune(r)
		case r == '|' && !code:
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteRune(r)
		}
	}
	return append(cells, strings.TrimSpace(cell.String()))
}

// shellLine splits a command line as sh would, as far as the docs need: words with their
// quotes removed ($(...) kept whole), the commands of a pipeline, a trailing & dropped, and
// the # comment.
func shellLine(s string) (cmds [][]string, comment string) {
	var cmd []string
	var word strings.Builder
	inWord, quote, depth := false, rune(0), 0
	flush := func() {
		if inWord {
			cmd = append(cmd, word.String())
			word.Reset()
			inWord = false
		}
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(r)
		case depth > 0:
			word.WriteRune(r)
			depth += map[rune]int{'(': 1, ')': -1}[r]
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '$' && i+1 < len(rs) && rs[i+1] == '(':
			word.WriteString("$(")
			i, depth, inWord = i+1, 1, true
		case r == ' ' || r == '\t' || r == '&':
			flush()
		case r == '|':
			flush()
			cmds, cmd = append(cmds, cmd), nil
		case r == '#' && !inWord:
			flush()
			return append(cmds, cmd), strings.TrimSpace(string(rs[i+1:]))
		case r == '\\' && i+1 < len(rs):
			i++
			word.WriteRune(rs[i])
			inWord = true
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	flush()
	return append(cmds, cmd), ""
}

// envWord is a variable assignment before a command.
var envWord = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// commandLine is one `executor` command of a shell line.
type commandLine struct {
	where   string            // docs/cli.md:N, or the cobra command whose Example it is
	text    string            // the line as written
	args    []string          // the words after `executor`
	env     map[string]string // assignments before it
	stdin   bool              // a program's output is piped into it
	piped   bool              // its output is piped into a program (jq)
	comment string            // the line's # comment
}

// parseCommandLine returns the executor command of a shell line: the command of its pipeline
// whose first word (after variable assignments) is `executor` or `./executor`. ok is false
// for a line without one.
func parseCommandLine(wh, text string) (commandLine, bool) {
	cmds, comment := shellLine(text)
	for k, words := range cmds {
		env := map[string]string{}
		for len(words) > 0 && envWord.MatchString(words[0]) {
			name, value, _ := strings.Cut(words[0], "=")
			env[name] = value
			words = words[1:]
		}
		if len(words) == 0 || (words[0] != "executor" && words[0] != "./executor") {
			continue
		}
		return commandLine{where: wh, text: strings.TrimSpace(text), args: words[1:], env: env,
			stdin: k > 0, piped: k < len(cmds)-1, comment: comment}, true
	}
	return commandLine{}, false
}

// example is a command line of a ```sh block, with the output the docs show after it.
type example struct {
	commandLine
	output []string // the lines after a `$ ` line up to the next one; none in a block without prompts
}

// shExamples returns the command lines of the page's ```sh blocks, in page order. In a block
// with `$ ` prompts, the lines after a prompt's command are its output; in one without, every
// line is a command line.
func shExamples(fs []fence) []example {
	var out []example
	for _, f := range fs {
		if f.lang != "sh" {
			continue
		}
		prompts := false
		for _, l := range f.lines {
			prompts = prompts || strings.HasPrefix(l, "$ ")
		}
		for i, l := range f.lines {
			if prompts && !strings.HasPrefix(l, "$ ") {
				continue
			}
			cl, ok := parseCommandLine(where(f.first+i), strings.TrimPrefix(l, "$ "))
			if !ok {
				continue
			}
			ex := example{commandLine: cl}
			for j := i + 1; prompts && j < len(f.lines) && !strings.HasPrefix(f.lines[j], "$ "); j++ {
				ex.output = append(ex.output, f.lines[j])
			}
			out = append(out, ex)
		}
	}
	return out
}

// synopses returns the usage lines of the page: the lines of a block without an info string
// whose first line starts with `executor `, continuation lines (indented) joined to theirs.
func synopses(fs []fence) []commandLine {
	var out []commandLine
	for _, f := range fs {
		if f.lang != "" || len(f.lines) == 0 || !strings.HasPrefix(f.lines[0], "executor ") {
			continue
		}
		for i, l := range f.lines {
			switch {
			case strings.HasPrefix(l, "executor "):
				out = append(out, commandLine{where: where(f.first + i), text: l})
			case strings.TrimSpace(l) != "" && len(out) > 0:
				out[len(out)-1].text += " " + strings.TrimSpace(l)
			}
		}
	}
	for i := range out { // [--flag VALUE] is --flag VALUE; a|b stays a word
		out[i].args = strings.Fields(strings.NewReplacer("[", " ", "]", " ").Replace(out[i].text))[1:]
	}
	return out
}

// cobraExamples returns the command lines of the Example of every command of the tree.
func cobraExamples(root *cobra.Command) []commandLine {
	var out []commandLine
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, l := range strings.Split(c.Example, "\n") {
			if cl, ok := parseCommandLine("Example of `"+c.CommandPath()+"`", strings.TrimSpace(l)); ok {
				out = append(out, cl)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return out
}
