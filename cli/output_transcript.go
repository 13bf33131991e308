package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/executor-dev/executor/wire"
)

// statusOutputLines bounds the lines of each stream status shows; task show shows them all.
const statusOutputLines = 20

// taskStatusTable is what status shows: the task (taskTable), then what the last attempt of
// each stage printed, its stdout and stderr tails indented, at most statusOutputLines lines
// of each.
func taskStatusTable(t wire.Task) func(io.Writer) {
	return func(w io.Writer) {
		taskTable(t)(w)
		attemptOutputs(w, t, lastOfEachStage(t.Attempts), statusOutputLines)
	}
}

// lastOfEachStage returns, in ledger order, the last attempt of each stage, and of each
// stage's undo, that printed anything.
func lastOfEachStage(attempts []wire.Attempt) []wire.Attempt {
	type key struct {
		index int
		undo  bool
	}
	last := map[key]int{} // stage (or its undo) → index in attempts
	for i, at := range attempts {
		if at.Stdout != "" || at.Stderr != "" {
			last[key{at.StageIndex, at.Undo}] = i
		}
	}
	var out []wire.Attempt
	for i, at := range attempts {
		if j, ok := last[key{at.StageIndex, at.Undo}]; ok && j == i {
			out = append(out, at)
		}
	}
	return out
}

// attemptOutputs writes, after a blank line, each attempt's output: a line naming the
// attempt, then "stdout:" and "stderr:" (each when not empty) with their lines indented, the
// last maxLines of each (0: all), control characters as spaces. Nothing without output.
func attemptOutputs(w io.Writer, t wire.Task, attempts []wire.Attempt, maxLines int) {
	for _, at := range attempts {
		if at.Stdout == "" && at.Stderr == "" {
			continue
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, cell(fmt.Sprintf("output of stage %s, run %d, attempt %d (%s):",
			stagePosition(t, at.StageIndex, attemptStage(at)), at.Run, at.Attempt, at.Outcome)))
		streamLines(w, "stdout", at.Stdout, maxLines)
		streamLines(w, "stderr", at.Stderr, maxLines)
	}
}

// streamLines writes one stream of an attempt's output under its label, indented.
func streamLines(w io.Writer, label, text string, maxLines int) {
	if text == "" {
		return
	}
	lines := strings.Split(strings.TrimRight(text, "\r\n"), "\n")
	fmt.Fprintln(w, "  "+label+":")
	if maxLines > 0 && len(lines) > maxLines {
		fmt.Fprintln(w, "    … "+strconv.Itoa(len(lines)-maxLines)+" earlier line(s): -o json or 'executor task show' shows them")
		lines = lines[len(lines)-maxLines:]
	}
	for _, l := range lines {
		fmt.Fprintln(w, "    "+cell(l))
	}
}
