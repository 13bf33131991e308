package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/wire"
)

func (a *invocation) planSummaryCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "summary ID",
		Short: "Count a plan's tasks by status, stage, failure class and gate",
		Long: `Count a plan's tasks without listing them (GET /v1/plans/{planId}/summary), whatever its
size: by current stage and status (the matrix, with the totals by status), by failure class
with a sample tenant and its message, the gates with WAITING tasks, and the RUNNING tasks
longest at their stage. 'plan show' prints the same after the plan; -o json prints
wire.PlanSummary.`,
		Example: `  executor plan summary 01JD7X...
  executor plan summary 01JD7X... -o json | jq '.failureClasses[0]'`,
		Args: exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return fetchAndPrint(a, func(c *client.Client) (*wire.PlanSummary, error) {
				return c.Summary(cmd.Context(), args[0])
			}, summaryTable)
		},
	}
}

// summaryStatuses are the columns of a summary's matrix: the statuses the plan has tasks
// in, in lifecycle order, then any this CLI does not know, sorted; every known status when
// the plan has no task at all.
func summaryStatuses(s wire.PlanSummary) []string {
	var out []string
	for _, st := range taskStatusOrder {
		if s.Statuses[st] != 0 {
			out = append(out, st)
		}
	}
	for _, st := range slices.Sorted(maps.Keys(s.Statuses)) {
		if s.Statuses[st] != 0 && !slices.Contains(taskStatusOrder, st) {
			out = append(out, st)
		}
	}
	if len(out) == 0 {
		return taskStatusOrder
	}
	return out
}

// summaryTable draws a plan's summary: the stage × status matrix with a total row, then,
// when there are any, the failure classes, the gates and the slowest RUNNING tasks, each with
// the command that goes on from there.
func summaryTable(s wire.PlanSummary) func(io.Writer) {
	return func(w io.Writer) {
		cols := summaryStatuses(s)
		n := max(len(s.Stages)-1, 0) // the plan's stages: the last entry counts the tasks past them
		fmt.Fprint(w, "STAGE")
		for _, st := range cols {
			fmt.Fprint(w, "\t"+st)
		}
		fmt.Fprintln(w)
		for _, sc := range s.Stages {
			cells := []string{summaryStage(sc, n)}
			for _, st := range cols {
				cells = append(cells, count(sc.Counts[st]))
			}
			row(w, cells...)
		}
		cells := []string{"total " + strconv.Itoa(s.Total)}
		for _, st := range cols {
			cells = append(cells, strconv.Itoa(s.Statuses[st]))
		}
		row(w, cells...)
		if s.Missing > 0 {
			fmt.Fprintf(w, "missing: %d task(s) the store no longer holds (not counted above): executor plan show %s -o json | jq .missingTasks\n", s.Missing, s.PlanID)
		}
		if len(s.FailureClasses) > 0 {
			fmt.Fprintln(w)
			fmt.Fprintln(w, "FAILURE CLASS\tTASKS\tSAMPLE TENANT\tSAMPLE MESSAGE")
			for _, fc := range s.FailureClasses {
				row(w, fc.Class, strconv.Itoa(fc.Count), fc.SampleTenantID, truncate(fc.SampleMessage, maxCell))
			}
			fmt.Fprintf(w, "list a class's tasks: executor plan tasks %s --class C\n", s.PlanID)
			fmt.Fprintf(w, "retry them: executor plan bulk retry %s --class C --from-checkpoint\n", s.PlanID)
			if others := otherRetryable(s.Statuses); others != "" {
				fmt.Fprintf(w, "  (that retries FAILED and INTERRUPTED tasks; add --status %s for the others of the class)\n", others)
			}
		}
		if len(s.Gates) > 0 {
			fmt.Fprintln(w)
			fmt.Fprintln(w, "GATE\tWAITING\tDECIDE")
			for _, g := range s.Gates {
				row(w, fmt.Sprintf("%s (%d/%d)", g.Stage, g.StageIndex+1, n), strconv.Itoa(g.Waiting),
					fmt.Sprintf("executor plan bulk approve %s --stage %s (or bulk reject)", s.PlanID, shellWord(g.Stage)))
			}
		}
		if len(s.Slowest) > 0 {
			fmt.Fprintln(w)
			fmt.Fprintln(w, "SLOWEST RUNNING\tTASK ID\tSTAGE\tSINCE\tFOR")
			for _, t := range s.Slowest {
				row(w, t.TenantID, t.TaskID, fmt.Sprintf("%s (%d/%d)", t.Stage, t.StageIndex+1, n), formatTime(&t.Since),
					(time.Duration(t.RunningMs) * time.Millisecond).Round(time.Second).String())
			}
		}
	}
}

// allStagesDone names the place past the last stage (a task that ran every stage), in the
// matrix, a task's STAGE cell and an event: no stage name can read so (stage.NamePattern has no
// parentheses nor spaces), so a stage named "done" is never taken for it.
const allStagesDone = "(all stages done)"

// summaryStage names a row of the matrix as a task's STAGE cell does: "push-config (1/4)", or
// allStagesDone past the last stage.
func summaryStage(sc wire.StageCounts, stages int) string {
	if sc.Index >= stages {
		return allStagesDone
	}
	return fmt.Sprintf("%s (%d/%d)", sc.Name, sc.Index+1, stages)
}

// count is n, or "" (drawn "-") for 0.
func count(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// planShowTable is a plan, then its summary.
func planShowTable(p wire.Plan, s wire.PlanSummary) func(io.Writer) {
	return func(w io.Writer) {
		planTable(p)(w)
		fmt.Fprintln(w)
		summaryTable(s)(w)
	}
}

// otherRetryable lists, comma-separated, the retryable statuses a bulk retry leaves out by
// default (it takes FAILED and INTERRUPTED) that some of the plan's tasks have: ROLLED_BACK,
// ROLLBACK_FAILED, CANCELLED ("" when none has).
func otherRetryable(statuses map[string]int) string {
	var out []string
	for _, st := range []string{"CANCELLED", "ROLLED_BACK", "ROLLBACK_FAILED"} {
		if statuses[st] > 0 {
			out = append(out, st)
		}
	}
	return strings.Join(out, ",")
}
