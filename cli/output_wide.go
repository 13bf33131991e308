package cli

import (
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/executor-dev/executor/wire"
)

// The extra columns of -o wide: those of a plan's row and a task's; every other table is the
// same as -o table.

// widePlanHeader is the header of a plan row's extra columns on a wide table, "" otherwise.
func widePlanHeader(w io.Writer) string {
	if !isWide(w) {
		return ""
	}
	return "\tLABELS\tFAILURE BUDGET\tMAX CONCURRENCY\tON FAILURE\tSUBMITTED BY"
}

// widePlanCells are a plan's extra cells on a wide table, none otherwise: its labels
// (key=value, sorted by key, comma-separated, cut at 80 characters), failure budget, most
// tasks running at once, what a failed task sets off, and who submitted it.
func widePlanCells(w io.Writer, p wire.Plan) []string {
	if !isWide(w) {
		return nil
	}
	return []string{labelsText(p.Labels), strconv.Itoa(p.FailureBudget), strconv.Itoa(p.MaxConcurrency), p.OnFailure, p.SubmittedBy}
}

// labelsText is labels as key=value, sorted by key, comma-separated, cut at maxCell.
func labelsText(labels map[string]string) string {
	pairs := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		pairs = append(pairs, k+"="+labels[k])
	}
	return truncate(strings.Join(pairs, ","), maxCell)
}

// wideTaskHeader is the header of a task row's extra columns on a wide table ("" otherwise):
// the executor whose run started it last and when it last changed, after its plan's id when
// withPlan (a row of a task shown alone: a plan's task listing names its plan already).
func wideTaskHeader(w io.Writer, withPlan bool) string {
	switch {
	case !isWide(w):
		return ""
	case withPlan:
		return "\tPLAN ID\tEXECUTOR\tUPDATED"
	}
	return "\tEXECUTOR\tUPDATED"
}

// wideTaskCells are a task's extra cells on a wide table (wideTaskHeader), none otherwise.
func wideTaskCells(w io.Writer, t wire.Task, withPlan bool) []string {
	if !isWide(w) {
		return nil
	}
	cells := []string{t.Executor, formatTime(&t.UpdatedAt)}
	if withPlan {
		cells = append([]string{t.PlanID}, cells...)
	}
	return cells
}
