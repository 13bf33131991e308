package cli

import (
	"fmt"
	"io"
	"reflect"

	"github.com/executor-dev/executor/wire"
)

// writeNames writes the ids of the objects v holds, one a line (-o name), for a script to
// capture: ID=$(executor submit -f plan.yaml -o name).
func writeNames(w io.Writer, v any) error {
	names, err := objectNames(v)
	if err != nil {
		return err
	}
	for _, n := range names {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}

// objectNames is what -o name prints of v (a wire body, or a pointer to one), per object:
//
//   - a plan, a plan's summary, retry or bulk action: the plan's id; a list of plans: each
//     plan's id;
//   - a task, or a checkpoint: the task's id (what 'task show' takes); a list of tasks: each
//     task's id;
//   - a tenant's lock or unlock: the tenant's id;
//   - a dry run: the ids of the tenants it shows, nothing being created;
//   - the executors: each one's name; an audit page: each record's id;
//   - the version: the version alone (what 'executor version' prints first).
func objectNames(v any) ([]string, error) {
	switch o := reflect.Indirect(reflect.ValueOf(v)).Interface().(type) {
	case wire.Plan:
		return []string{o.PlanID}, nil
	case wire.PlanList:
		return collect(o.Plans, func(p wire.Plan) string { return p.PlanID }), nil
	case wire.PlanSummary:
		return []string{o.PlanID}, nil
	case wire.PlanRetry:
		return []string{o.Plan.PlanID}, nil
	case wire.BulkResult:
		return []string{o.PlanID}, nil
	case wire.Task:
		return []string{o.TaskID}, nil
	case wire.TaskList:
		return collect(o.Tasks, func(t wire.Task) string { return t.TaskID }), nil
	case wire.Checkpoint:
		return []string{o.TaskID}, nil
	case wire.TenantLock:
		return []string{o.TenantID}, nil
	case wire.TenantUnlock:
		return []string{o.TenantID}, nil
	case wire.DryRun:
		return collect(o.Tenants, func(t wire.TenantPreview) string { return t.TenantID }), nil
	case wire.ExecutorList:
		return collect(o.Executors, func(e wire.Executor) string { return e.Name }), nil
	case wire.AuditPage:
		return collect(o.Records, func(r wire.AuditRecord) string { return r.ID }), nil
	case versionInfo:
		return []string{o.Version}, nil
	}
	return nil, fmt.Errorf("-o name: %T has no id: use -o json or -o yaml", v)
}

// collect is name of every item.
func collect[T any](items []T, name func(T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = name(it)
	}
	return out
}
