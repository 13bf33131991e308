package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/wire"
)

// maxCell bounds free-text table cells (error messages).
const maxCell = 80

// print writes v in the -o format: indented JSON (-o json), the same document as YAML (-o
// yaml), the ids of the objects v holds one a line (-o name: objectNames), or the table that
// table draws (-o table; -o wide draws it on a writer that says so: isWide).
func (a *invocation) print(v any, table func(w io.Writer)) error {
	switch a.output {
	case OutputJSON:
		enc := json.NewEncoder(a.stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case OutputYAML:
		return writeYAML(a.stdout, v)
	case OutputName:
		return writeNames(a.stdout, v)
	}
	tw := a.newTable()
	table(tw)
	return tw.Flush()
}

// fetchAndPrint calls the API with a.client() and prints what fetch returns, as JSON or as
// the table render draws: the body of most client commands.
func fetchAndPrint[T any](a *invocation, fetch func(c *client.Client) (*T, error), render func(T) func(io.Writer)) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	v, err := fetch(c)
	if err != nil {
		return err
	}
	return a.print(v, render(*v))
}

func row(w io.Writer, cells ...string) {
	for i, c := range cells {
		if c == "" {
			cells[i] = "-"
		} else {
			cells[i] = cell(c)
		}
	}
	fmt.Fprintln(w, strings.Join(cells, "\t"))
}

// cell makes s safe for one tabwriter cell: no tabs, newlines or other control characters.
func cell(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

func truncate(s string, n int) string {
	s = oneLine(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func formatTime(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// taskStatusOrder is the order in which per-status counts are shown.
var taskStatusOrder = func() []string {
	out := make([]string, len(task.Statuses))
	for i, s := range task.Statuses {
		out[i] = string(s)
	}
	return out
}()

// progressCounts returns "STATUS=n" for every non-zero task status of a plan's progress, in
// lifecycle order, then any status this CLI does not know, sorted.
func progressCounts(progress map[string]int) []string {
	var out []string
	for _, s := range taskStatusOrder {
		if n := progress[s]; n != 0 {
			out = append(out, s+"="+strconv.Itoa(n))
		}
	}
	for _, s := range slices.Sorted(maps.Keys(progress)) {
		if s == "total" || slices.Contains(taskStatusOrder, s) || progress[s] == 0 {
			continue
		}
		out = append(out, s+"="+strconv.Itoa(progress[s]))
	}
	return out
}

func planHeader(w io.Writer) {
	fmt.Fprintln(w, "PLAN ID\tNAME\tSTATUS\tTASKS\tPROGRESS\tCREATED\tSTART AT"+widePlanHeader(w))
}

// planRow is a plan's row; START AT is the plan's startAt, "-" when it was submitted without;
// then, on a wide table, the extra cells (widePlanCells).
func planRow(w io.Writer, p wire.Plan) {
	row(w, append([]string{p.PlanID, p.Name, p.Status, strconv.Itoa(p.Progress["total"]),
		strings.Join(progressCounts(p.Progress), " "), formatTime(&p.CreatedAt), formatTime(p.StartAt)},
		widePlanCells(w, p)...)...)
}

// planTable is a plan, followed by its canary wave and start rate when set.
func planTable(p wire.Plan) func(io.Writer) {
	return func(w io.Writer) {
		planHeader(w)
		planRow(w, p)
		planRolloutLines(w, p)
		planOutcomeLine(w, p)
	}
}

func planListTable(l wire.PlanList) func(io.Writer) {
	return func(w io.Writer) {
		planHeader(w)
		for _, p := range l.Plans {
			planRow(w, p)
		}
	}
}

func taskHeader(w io.Writer) {
	fmt.Fprintln(w, "TENANT\tTASK ID\tSTATUS\tATTEMPT\tSTAGE\tCHECKPOINT\tLEASE\tLAST ERROR"+wideTaskHeader(w, true))
}

// taskRow is a task's row; then, on a wide table, the extra cells (wideTaskCells).
func taskRow(w io.Writer, t wire.Task) {
	row(w, append([]string{t.TenantID, t.TaskID, t.Status, strconv.Itoa(t.Attempt), taskStage(t),
		taskCheckpoint(t), taskLease(t), taskError(t)}, wideTaskCells(w, t, true)...)...)
}

// taskStage is the next stage to run with its position, e.g. "s3 (3/4)", or allStagesDone
// once every stage ran; for a task rolling back, the next undo (rollbackStage).
func taskStage(t wire.Task) string {
	if t.RollingBack {
		return rollbackStage(t)
	}
	n := len(t.Stages)
	if t.CurrentStageName == "" {
		return allStagesDone
	}
	return fmt.Sprintf("%s (%d/%d)", t.CurrentStageName, t.CurrentStage+1, n)
}

// taskCheckpoint is the last completed stage's index and name, e.g. "1 (s2)".
func taskCheckpoint(t wire.Task) string {
	cp := t.Checkpoint
	if cp == nil || cp.LastCompletedStageIndex < 0 {
		return ""
	}
	if k := len(cp.CompletedStages); k > 0 {
		return fmt.Sprintf("%d (%s)", cp.LastCompletedStageIndex, cp.CompletedStages[k-1])
	}
	return strconv.Itoa(cp.LastCompletedStageIndex)
}

func taskLease(t wire.Task) string {
	if t.Lease == nil || !t.Lease.Held {
		return ""
	}
	if t.Lease.Owner == "" {
		return "held"
	}
	return t.Lease.Owner
}

// taskError is the last error as "<class>: <message>", truncated.
func taskError(t wire.Task) string {
	if t.LastError == nil {
		return ""
	}
	return truncate(t.LastError.Class+": "+t.LastError.Message, maxCell)
}

// taskTable is a task, followed by why it waits (WAITING), its latest gate decision and how
// far its rollback is.
func taskTable(t wire.Task) func(io.Writer) {
	return func(w io.Writer) {
		taskHeader(w)
		taskRow(w, t)
		taskGateLines(w, t)
		taskRollbackLines(w, t)
	}
}

// taskListTable lists tasks. A plan's task listing carries no lease or checkpoint (the
// server leaves them out): those columns are left out too rather than shown empty.
func taskListTable(l wire.TaskList) func(io.Writer) {
	full := slices.ContainsFunc(l.Tasks, func(t wire.Task) bool { return t.Lease != nil || t.Checkpoint != nil })
	return func(w io.Writer) {
		if full {
			taskHeader(w)
		} else {
			fmt.Fprintln(w, "TENANT\tTASK ID\tSTATUS\tATTEMPT\tSTAGE\tLAST ERROR"+wideTaskHeader(w, false))
		}
		for _, t := range l.Tasks {
			if full {
				taskRow(w, t)
				continue
			}
			row(w, append([]string{t.TenantID, t.TaskID, t.Status, strconv.Itoa(t.Attempt), taskStage(t), taskError(t)},
				wideTaskCells(w, t, false)...)...)
		}
	}
}

// taskDetailTable is a task followed by its wait, decision and rollback, its attempt ledger
// (an undo's attempts at stage "undo:<stage>"), and what each attempt printed
// (attemptOutputs).
func taskDetailTable(t wire.Task) func(io.Writer) {
	return func(w io.Writer) {
		taskTable(t)(w)
		if len(t.Attempts) == 0 {
			return
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "STAGE\tRUN\tATTEMPT\tOUTCOME\tCLASS\tCODE\tDURATION\tBACKOFF\tERROR")
		for _, at := range t.Attempts {
			code, backoff := "", ""
			if at.Code != 0 {
				code = strconv.Itoa(at.Code)
			}
			if at.BackoffMs != 0 {
				backoff = (time.Duration(at.BackoffMs) * time.Millisecond).String()
			}
			dur := ""
			if !at.StartedAt.IsZero() && !at.EndedAt.IsZero() {
				dur = at.EndedAt.Sub(at.StartedAt).Round(time.Millisecond).String()
			}
			row(w, fmt.Sprintf("%d %s", at.StageIndex, attemptStage(at)), strconv.Itoa(at.Run), strconv.Itoa(at.Attempt),
				at.Outcome, at.Class, code, dur, backoff, truncate(at.Error, maxCell))
		}
		attemptOutputs(w, t, t.Attempts, 0)
	}
}

func checkpointTable(cp wire.Checkpoint) func(io.Writer) {
	return func(w io.Writer) {
		fmt.Fprintln(w, "TENANT\tTASK ID\tLAST COMPLETED\tCOMPLETED STAGES\tOUTPUTS\tSAVED AT\tFENCE")
		last := strconv.Itoa(cp.LastCompletedStageIndex)
		if cp.LastCompletedStageIndex < 0 {
			last = "none"
		}
		row(w, cp.TenantID, cp.TaskID, last, strings.Join(cp.CompletedStages, ","),
			strings.Join(slices.Sorted(maps.Keys(cp.ContextData)), ","), formatTime(&cp.SavedAt),
			strconv.FormatUint(cp.Fence, 10))
		if p := cp.Progress; p != nil { // a stage part-way (an http poll's first response): a retry from here goes on from it
			fmt.Fprintf(w, "\nIN PROGRESS\t%s\t%s\n", p.Stage, truncate(string(p.Data), 2*maxCell))
		}
	}
}

// dryRunTable shows the page of tenants' rendered stages, then what the dry run checked and
// the conflicts.
func dryRunTable(d wire.DryRun) func(io.Writer) {
	return func(w io.Writer) {
		fmt.Fprintln(w, "TENANT\tSTAGE\tKIND\tPARAMS")
		for _, t := range d.Tenants {
			for _, s := range t.Stages {
				params := ""
				if len(s.Params) > 0 {
					var b strings.Builder
					enc := json.NewEncoder(&b)
					enc.SetEscapeHTML(false)
					if enc.Encode(s.Params) == nil {
						params = truncate(b.String(), 2*maxCell)
					}
				}
				row(w, t.TenantID, s.Name, s.Kind, params)
				if m := s.Measurement; m != nil {
					row(w, "", "", "", "measured once: "+measurementText(*m))
				}
			}
		}
		for k, r := range d.Rings {
			for _, a := range r.Analysis {
				fmt.Fprintf(w, "ring %d (%s) analysis %s measured once: %s\n", k, cell(r.Wave), cell(a.Name), measurementText(a.Measurement))
			}
		}
		fmt.Fprintln(w)
		if len(d.Tenants) < d.Summary.Tenants {
			fmt.Fprintf(w, "showing tenants %d-%d of %d", d.Page.Offset+1, d.Page.Offset+len(d.Tenants), d.Summary.Tenants)
			if d.Page.NextOffset > 0 {
				fmt.Fprintf(w, " (next: --preview-offset %d)", d.Page.NextOffset)
			}
			fmt.Fprintln(w)
		}
		if len(d.Conflicts) == 0 {
			fmt.Fprintf(w, "%d tenants checked, no conflicts: nothing was created\n", d.Summary.Tenants)
			return
		}
		fmt.Fprintf(w, "%d tenants checked, conflicts (a task that has not ended): %s\n", d.Summary.Tenants, strings.Join(d.Conflicts, ", "))
	}
}

// unreachableHint is what the error line adds when err is a request to the executor that
// could not connect (connection refused, no such host, a dial that timed out): whether an
// executor serves at --server, and how to point the client at one. "" for any other error (an
// executor's answer, a connection it dropped, an error that is not a request's).
func (a *invocation) unreachableHint(err error) string {
	var ue *url.Error
	var oe *net.OpError
	var de *net.DNSError
	if !errors.As(err, &ue) || !(errors.As(err, &de) || errors.As(err, &oe) && oe.Op == "dial") {
		return ""
	}
	return fmt.Sprintf("; is an executor serving at %s? point the client at one with --server URL or %s", a.server, EnvServer)
}
