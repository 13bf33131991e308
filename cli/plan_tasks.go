package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/wire"
)

// taskSorts are the orders of plan tasks --sort.
var taskSorts = []string{client.SortOrder, client.SortOrderDesc, client.SortTenant, client.SortTenantDesc}

// taskFilter holds the flags that select a plan's tasks by what the plan's index holds of
// each (plan tasks, plan bulk): the filters of GET /v1/plans/{planId}/tasks.
type taskFilter struct {
	statuses []string
	stage    string
	class    string
	tenant   string
}

// addFlags declares --status (statusHelp says which), --stage, --class and --tenant on cmd.
func (f *taskFilter) addFlags(cmd *cobra.Command, statusHelp string) {
	fl := cmd.Flags()
	fl.StringSliceVar(&f.statuses, "status", nil, statusHelp)
	fl.StringVar(&f.stage, "stage", "", "only tasks at this current stage: its name, or its index (0-based; the number of stages: every stage done)")
	fl.StringVar(&f.class, "class", "", "only tasks whose last error has this failure class (permanent, retryable, timeout, ...)")
	fl.StringVar(&f.tenant, "tenant", "", "only tasks whose tenant id starts with this prefix")
}

// checkStatuses returns --status upper-cased and checked: each a task status and, when
// allowed is not empty, one of allowed (what names the command in the error).
func (f *taskFilter) checkStatuses(allowed []string, what string) ([]string, error) {
	var out []string
	for _, v := range f.statuses {
		s := strings.ToUpper(strings.TrimSpace(v))
		switch {
		case !task.Status(s).Valid():
			return nil, usagef("invalid --status %q: want one of %s", v, strings.Join(taskStatusOrder, ", "))
		case len(allowed) > 0 && !slices.Contains(allowed, s):
			return nil, usagef("invalid --status %q: %s takes %s", v, what, strings.Join(allowed, ", "))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

func (a *invocation) planTasksCmd() *cobra.Command {
	var filter taskFilter
	var sort string
	var pageSize int
	cmd := &cobra.Command{
		Use:   "tasks ID [--status S,...] [--stage S] [--class C] [--tenant PREFIX] [--sort ORDER]",
		Short: "List a plan's tasks, all of them or those matching filters",
		Long: `List every task of a plan matching the filters (all of them without), reading all pages
(--page-size tasks each, following the API's nextCursor: each task at most once, and without a
filter every task exactly once) and printing each page as it comes. The filters are read from
the plan's index on the server: a page of a 100,000-task plan reads only its own tasks.

  --status S,...   tasks in one of these statuses (comma-separated or repeated, any case)
  --stage S        tasks whose next stage to run is S: its name or its index (0-based); the
                   number of stages selects the tasks past the last stage
  --class C        tasks whose last error has failure class C (permanent, timeout, ...)
  --tenant P       tasks whose tenant id starts with P
  --sort ORDER     order (the submission's, default), -order, tenant or -tenant (tenant id)

-o json prints one wire.TaskList: every matching task and their total.`,
		Example: `  executor plan tasks 01JD7X...
  executor plan tasks 01JD7X... --status FAILED,INTERRUPTED
  executor plan tasks 01JD7X... --stage approve-prod --status WAITING --tenant eu-
  executor plan tasks 01JD7X... --class timeout --sort=-tenant -o json | jq -r '.tasks[].tenantId'`,
		Args: exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := filter.checkStatuses(nil, "")
			if err != nil {
				return err
			}
			if sort != "" && !slices.Contains(taskSorts, sort) {
				return usagef("invalid --sort %q: want one of %s", sort, strings.Join(taskSorts, ", "))
			}
			if pageSize < 1 || pageSize > app.MaxListLimit {
				return usagef("invalid --page-size %d: want 1 to %d", pageSize, app.MaxListLimit)
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			q := client.TaskQuery{Status: strings.Join(st, ","), Stage: filter.stage, Class: filter.class,
				Tenant: filter.tenant, Sort: sort, Limit: pageSize}
			out := a.taskListWriter()
			if err := c.EachPlanTasksPage(cmd.Context(), args[0], q, out.page); err != nil {
				return err
			}
			return out.end()
		},
	}
	filter.addFlags(cmd, "only tasks in these statuses, comma-separated ("+strings.Join(taskStatusOrder, ", ")+")")
	f := cmd.Flags()
	f.StringVar(&sort, "sort", "", "order of the tasks: "+strings.Join(taskSorts, ", ")+" (default order: the submission's)")
	f.IntVar(&pageSize, "page-size", client.TaskPageSize, "tasks read per request (1 to 1000)")
	return cmd
}

// taskListWriter prints a plan's task listing page by page as it is read: a table, the tasks'
// ids (-o name), or one wire.TaskList as JSON, byte for byte what a.print would write of the
// whole list. YAML is written once every page was read (its tasks are kept until then).
type taskListWriter struct {
	a       *invocation
	tw      *tableWriter
	n       int // tasks written
	last    *wire.TaskList
	started bool
	kept    []wire.Task // -o yaml
}

func (a *invocation) taskListWriter() *taskListWriter {
	return &taskListWriter{a: a, tw: a.newTable()}
}

// page writes one page: its rows (after the header, on the first page), flushed.
func (w *taskListWriter) page(p *wire.TaskList) error {
	w.last = p
	switch w.a.output {
	case OutputJSON:
		return w.jsonPage(p)
	case OutputYAML:
		w.kept = append(w.kept, p.Tasks...)
		return nil
	case OutputName:
		return writeNames(w.a.stdout, p)
	}
	if !w.started {
		w.started = true
		fmt.Fprintln(w.tw, "TENANT\tTASK ID\tSTATUS\tATTEMPT\tSTAGE\tLAST ERROR"+wideTaskHeader(w.tw, false))
	}
	for _, t := range p.Tasks {
		row(w.tw, append([]string{t.TenantID, t.TaskID, t.Status, strconv.Itoa(t.Attempt), taskStage(t), taskError(t)},
			wideTaskCells(w.tw, t, false)...)...)
	}
	w.n += len(p.Tasks)
	return w.tw.Flush()
}

// jsonPage writes a page's tasks as items of the "tasks" array of an indented wire.TaskList.
func (w *taskListWriter) jsonPage(p *wire.TaskList) error {
	var b bytes.Buffer
	if !w.started {
		w.started = true
		b.WriteString("{\n  \"tasks\": [")
	}
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("    ", "  ")
	for _, t := range p.Tasks {
		if w.n > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    ")
		if err := enc.Encode(t); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1) // the encoder's newline
		w.n++
	}
	_, err := w.a.stdout.Write(b.Bytes())
	return err
}

// end finishes the listing: the JSON document's total and missing tasks (those of the last
// page, as the API's), the YAML document, or nothing more for a table or names.
func (w *taskListWriter) end() error {
	last := w.last
	if last == nil {
		last = &wire.TaskList{}
	}
	switch w.a.output {
	case OutputYAML:
		return writeYAML(w.a.stdout, wire.TaskList{Tasks: append([]wire.Task{}, w.kept...), Total: last.Total, MissingTasks: last.MissingTasks})
	case OutputJSON:
	default:
		return nil
	}
	var b bytes.Buffer
	if !w.started {
		b.WriteString("{\n  \"tasks\": [")
	}
	if w.n > 0 {
		b.WriteString("\n  ]")
	} else {
		b.WriteString("]")
	}
	fmt.Fprintf(&b, ",\n  \"total\": %d", last.Total)
	if len(last.MissingTasks) > 0 {
		b.WriteString(",\n  \"missingTasks\": ")
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("  ", "  ")
		if err := enc.Encode(last.MissingTasks); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1)
	}
	b.WriteString("\n}\n")
	_, err := io.Copy(w.a.stdout, &b)
	return err
}
