package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/executor-dev/executor/wire"
)

// planRolloutLines follows a plan's row with its canary wave, start rate and onFailure, when
// set, and what an operator may do at a canary gate.
func planRolloutLines(w io.Writer, p wire.Plan) {
	if c := p.Canary; c != nil {
		fmt.Fprintf(w, "canary: first %d tenant(s), then %s; phase %s\n", c.Tenants, cell(c.Then), cell(c.Phase))
		if c.Phase == "AWAITING_APPROVAL" {
			fmt.Fprintf(w, "the canaries completed: 'executor plan approve %s' starts the rest, 'executor plan reject %s' halts the plan\n",
				p.PlanID, p.PlanID)
		}
	} else if p.Rings != nil {
		ringLines(w, p)
	}
	if line := budgetLine(p); line != "" {
		fmt.Fprintln(w, line)
	}
	if p.StartRate > 0 {
		fmt.Fprintf(w, "start rate: at most %d task starts per minute\n", p.StartRate)
	}
	if what := onFailureText[p.OnFailure]; what != "" {
		fmt.Fprintf(w, "on failure: %s\n", what)
	}
	if p.Reason != "" && p.Status == "PAUSED" { // a plan that ended meanwhile asks nothing (one stored before ends cleared it)
		fmt.Fprintf(w, "paused: %s\n'executor plan resume %s' continues the never-started tenants, 'executor plan retry %s --status INTERRUPTED --from-checkpoint' the interrupted ones\n",
			p.Reason, p.PlanID, p.PlanID)
	}
}

// budgetLine says a plan's failure budgets in one line, as the console does: with rings, each
// ring's (its FAILED tenants crossing it halt the plan; the current ring's spelled out), then
// the plan-wide one; the plan-wide one alone (after that many FAILED tasks nothing new starts)
// without rings; nothing for a plan with neither (every task runs, whatever fails).
func budgetLine(p wire.Plan) string {
	wide := "none"
	if p.FailureBudget > 0 {
		wide = fmt.Sprintf("%d failed task(s), then nothing new starts", p.FailureBudget)
	}
	r := p.Rings
	if r == nil || r.Current < 0 || r.Current >= len(r.Waves) {
		if p.FailureBudget == 0 {
			return ""
		}
		return "failure budget: plan-wide " + wide
	}
	cur := r.Waves[r.Current]
	return fmt.Sprintf("failure budget: per ring, crossing it halts the plan (ring %d now: %d of %d tenant(s) may fail, budget %s); plan-wide: %s",
		r.Current, cur.Tolerates, cur.Tenants, cur.FailureBudget, wide)
}

// ringBudget is a ring's failure budget in its line: the share, and for a percentage how many
// of its tenants that tolerates.
func ringBudget(v wire.RingView) string {
	if strings.HasSuffix(v.FailureBudget, "%") {
		return fmt.Sprintf("%s (%d of %d)", v.FailureBudget, v.Tolerates, v.Tenants)
	}
	return v.FailureBudget
}

// taskGateLines follows a task's row with why it waits (a WAITING task) and the latest
// decision on one of its gates.
func taskGateLines(w io.Writer, t wire.Task) {
	if wt := t.Wait; wt != nil {
		line := fmt.Sprintf("waiting: %s at stage %s since %s", wt.Reason, stagePosition(t, wt.StageIndex, wt.Stage), formatTime(&wt.Since))
		if wt.Message != "" {
			line += ": " + wt.Message
		}
		fmt.Fprintln(w, cell(truncate(line, 2*maxCell)))
		if wt.Needed > 1 {
			by := make([]string, len(wt.Approvals))
			for i, a := range wt.Approvals {
				by[i] = a.By
			}
			fmt.Fprintf(w, "approvals: %d of %d (%s)\n", len(wt.Approvals), wt.Needed, cell(strings.Join(by, ", ")))
		}
		fmt.Fprintf(w, "decide with 'executor approve --tenant %s' or 'executor reject --tenant %s' (--comment C)\n", t.TenantID, t.TenantID)
	}
	if d := t.Decision; d != nil {
		verdict := "rejected"
		if d.Approved {
			verdict = "approved"
		}
		line := fmt.Sprintf("decision: %s at stage %s in run %d, %s", verdict, stagePosition(t, d.StageIndex, d.Stage), d.Run, formatTime(&d.DecidedAt))
		if d.By != "" {
			by := make([]string, 0, len(d.Earlier)+1)
			for _, a := range d.Earlier {
				by = append(by, a.By)
			}
			switch {
			case d.Approved:
				line += " by " + strings.Join(append(by, d.By), ", ")
			case len(by) > 0:
				line += " by " + d.By + " (after approvals by " + strings.Join(by, ", ") + ")"
			default:
				line += " by " + d.By
			}
		}
		if d.Comment != "" {
			line += ": " + d.Comment
		}
		fmt.Fprintln(w, cell(truncate(line, 2*maxCell)))
	}
}

// stagePosition is a stage's name with its position, e.g. "gate (2/3)".
func stagePosition(t wire.Task, index int, name string) string {
	return fmt.Sprintf("%s (%d/%d)", name, index+1, len(t.Stages))
}

// planRetryTable is the plan after a bulk retry, then every selected task: retried, or
// skipped and why.
func planRetryTable(r wire.PlanRetry) func(io.Writer) {
	return func(w io.Writer) {
		planTable(r.Plan)(w)
		fmt.Fprintln(w)
		fmt.Fprintf(w, "retried %d task(s), skipped %d\n", len(r.Retried), len(r.Skipped))
		if len(r.Retried)+len(r.Skipped) == 0 {
			return
		}
		fmt.Fprintln(w, "TENANT\tTASK ID\tRESULT\tREASON")
		for _, t := range r.Retried {
			row(w, t.TenantID, t.TaskID, "retried", "")
		}
		for _, t := range r.Skipped {
			row(w, t.TenantID, t.TaskID, "skipped", truncate(t.Reason, maxCell))
		}
	}
}

// lockTable is a tenant's lease; TTL is empty when it is not held or never expires.
func lockTable(l wire.TenantLock) func(io.Writer) {
	return func(w io.Writer) {
		fmt.Fprintln(w, "TENANT\tHELD\tOWNER\tTTL\tTASK ID\tPLAN ID\tEPOCH")
		ttl := ""
		if l.TTLMs > 0 {
			ttl = (time.Duration(l.TTLMs) * time.Millisecond).String()
		}
		row(w, l.TenantID, strconv.FormatBool(l.Held), l.Owner, ttl, l.TaskID, l.PlanID, strconv.FormatUint(l.Epoch, 10))
	}
}

// unlockTable is what an unlock did, with the way on when it interrupted a run.
func unlockTable(u wire.TenantUnlock) func(io.Writer) {
	return func(w io.Writer) {
		fmt.Fprintln(w, "TENANT\tRELEASED\tPREVIOUS OWNER\tTASK ID\tEPOCH\tINTERRUPTED")
		row(w, u.TenantID, strconv.FormatBool(u.Released), u.PreviousOwner, u.TaskID,
			strconv.FormatUint(u.Epoch, 10), strconv.FormatBool(u.Interrupted))
		if u.Interrupted {
			fmt.Fprintf(w, "the running task is INTERRUPTED: 'executor retry --tenant %s --from-checkpoint' runs it on\n", u.TenantID)
		}
	}
}

// ringLines prints a rolling plan's rings, one line each (the current one marked, a bake's
// time left), then why it halted or that it awaits approval, with the commands.
func ringLines(w io.Writer, p wire.Plan) {
	r := p.Rings
	fmt.Fprintf(w, "rings (order %s", r.Order)
	if r.Order == "shuffle" {
		fmt.Fprintf(w, ", seed %d", r.Seed)
	}
	fmt.Fprintln(w, "):")
	for k, v := range r.Waves {
		mark := " "
		if k == r.Current {
			mark = ">"
		}
		line := fmt.Sprintf("%s %d %-12s %-7s %5d tenant(s)  %-18s then %-7s budget %s", mark, k, cell(v.Name), cell(v.Size), v.Tenants,
			v.State, v.Then, ringBudget(v))
		if v.Bake != "" {
			line += "  bake " + v.Bake
		}
		if v.BakeLeftMs > 0 {
			line += fmt.Sprintf(" (%s left)", (time.Duration(v.BakeLeftMs) * time.Millisecond).Round(100*time.Millisecond))
		}
		if v.Health != nil {
			line += "  check " + cell(v.Health.Name)
		}
		fmt.Fprintln(w, line)
		analysisLines(w, v.Analysis)
	}
	switch {
	case r.Halted != nil && r.Waves[r.Current].State == "halted":
		fmt.Fprintf(w, "halted: %s\n'executor plan approve %s' goes on, 'executor plan reject %s' cancels the tenants not started (--rollback also puts back the ring's)\n",
			cell(r.Halted.Reason), p.PlanID, p.PlanID)
	case r.Waves[r.Current].State == "awaiting_approval":
		fmt.Fprintf(w, "ring %d completed: 'executor plan approve %s' starts the next ring, 'executor plan reject %s' cancels the rest\n",
			r.Current, p.PlanID, p.PlanID)
	}
}

// analysisLines prints a ring's analyses under it: each one's counts and latest measurement.
func analysisLines(w io.Writer, as []wire.AnalysisView) {
	for _, a := range as {
		line := fmt.Sprintf("      analysis %s every %s: %d successful, %d failed (limit %d), %d inconclusive (limit %d)",
			cell(a.Name), a.Interval, a.Successful, a.Failed, a.FailureLimit, a.Inconclusive, a.InconclusiveLimit)
		if n := len(a.Measurements); n > 0 {
			line += "; latest " + measurementText(a.Measurements[n-1])
		} else {
			line += "; no measurement (the plan keeps those of its latest bake with analyses)"
		}
		fmt.Fprintln(w, line)
	}
}

// measurementText is one measurement on a line: its time, verdict, value and why.
func measurementText(m wire.Measurement) string {
	return fmt.Sprintf("%s %s = %s (%s)", m.At.Local().Format("15:04:05"), m.Verdict, cell(m.Value), cell(m.Message))
}
