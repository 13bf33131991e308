package app

import (
	"fmt"
	"github.com/executor-dev/executor/domain/audit"
	"slices"
	"strconv"
	"strings"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// TaskFilter selects a plan's tasks by what the plan's index holds of each: the task listing
// and the actions on a filter (BulkTasks) take it. The zero value selects every task.
type TaskFilter struct {
	// Statuses keeps the tasks in one of them; empty: any status.
	Statuses []task.Status
	// Stage keeps the tasks at that current stage: a stage's name or its index ("0" ..
	// the number of stages, which means every stage done); empty: any stage.
	Stage string
	// Class keeps the tasks whose last error has that failure class.
	Class string
	// Tenant keeps the tasks whose tenant id starts with it.
	Tenant string
	// Ring keeps the tasks of one ring of a rolling plan: its wave's name or its index;
	// empty: any ring.
	Ring string
}

// auditAttrs is the filter as an audit record keeps it: each criterion set.
func (f TaskFilter) auditAttrs() []audit.Attr {
	var out []audit.Attr
	if len(f.Statuses) > 0 {
		names := make([]string, len(f.Statuses))
		for i, st := range f.Statuses {
			names[i] = string(st)
		}
		out = append(out, attr("status", strings.Join(names, ",")))
	}
	for _, c := range []struct{ key, value string }{
		{"stage", f.Stage}, {"class", f.Class}, {"tenant", f.Tenant}, {"ring", f.Ring},
	} {
		if c.value != "" {
			out = append(out, attr(c.key, c.value))
		}
	}
	return out
}

// rowFilter is a TaskFilter resolved against a plan: what a row must be to match.
type rowFilter struct {
	statuses []task.Status
	stage    int // -1: any
	class    string
	tenant   string
	ring     map[string]bool // the ids of the ring's tasks; nil: any ring
}

// checkStatuses checks f's statuses: each known and, when allowed is not empty, one of
// allowed. field names them in errors ("status", or "status[%d]" for each of a list).
func (f TaskFilter) checkStatuses(field string, allowed []task.Status) error {
	for i, st := range f.Statuses {
		name := field
		if strings.Contains(name, "%d") {
			name = fmt.Sprintf(name, i)
		}
		if !st.Valid() {
			return invalid(name, fmt.Sprintf("unknown task status %q", st))
		}
		if len(allowed) > 0 && !slices.Contains(allowed, st) {
			return invalid(name, fmt.Sprintf("%q cannot take this action: use one of %v", st, allowed))
		}
	}
	return nil
}

// resolve is f against p (its statuses checked first with checkStatuses): the stage, a name
// or an index of p, becomes an index.
func (f TaskFilter) resolve(p *plan.Plan) (rowFilter, error) {
	rf := rowFilter{statuses: f.Statuses, stage: -1, class: f.Class, tenant: f.Tenant}
	if f.Ring != "" {
		ids, err := ringTasks(p, f.Ring)
		if err != nil {
			return rowFilter{}, err
		}
		rf.ring = make(map[string]bool, len(ids))
		for _, id := range ids {
			rf.ring[id] = true
		}
	}
	if f.Stage == "" {
		return rf, nil
	}
	stages := p.Stages()
	for i, s := range stages {
		if s.Name == f.Stage {
			rf.stage = i
			return rf, nil
		}
	}
	n, err := strconv.Atoi(f.Stage)
	if err != nil || n < 0 || n > len(stages) {
		return rowFilter{}, invalid("stage", fmt.Sprintf("%q is neither a stage of the plan nor an index from 0 to %d", f.Stage, len(stages)))
	}
	rf.stage = n
	return rf, nil
}

// match reports whether r passes the filter.
func (rf rowFilter) match(r task.Row) bool {
	return (len(rf.statuses) == 0 || slices.Contains(rf.statuses, r.Status)) &&
		(rf.stage < 0 || r.Stage == rf.stage) &&
		(rf.class == "" || r.Class == rf.class) &&
		strings.HasPrefix(r.TenantID, rf.tenant) &&
		(rf.ring == nil || rf.ring[r.ID])
}

// ringTasks returns the task ids of p's ring named ring (a wave's name or a ring's index).
func ringTasks(p *plan.Plan, ring string) ([]string, error) {
	waves := p.Rollout().Waves
	if len(waves) == 0 {
		return nil, invalid("ring", "the plan does not roll out in rings")
	}
	for i, w := range waves {
		if w.Name == ring {
			return p.RingTaskIDs(i), nil
		}
	}
	n, err := strconv.Atoi(ring)
	if err != nil || n < 0 || n >= len(waves) {
		return nil, invalid("ring", fmt.Sprintf("%q is neither a wave of the plan nor a ring index from 0 to %d", ring, len(waves)-1))
	}
	return p.RingTaskIDs(n), nil
}
