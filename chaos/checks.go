//go:build chaos

package chaos

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Evidence is everything the checks read: the history, the target's calls, what the workload
// saw and the final snapshot.
type Evidence struct {
	History           *History
	Calls             []Call
	Overlaps          []Overlap
	MaxInFlight       int
	MaxInFlightTenant string
	Plans             []PlanState // the workload's view
	Snapshot          *Snapshot
	Grace             time.Duration // a call starting this long after a cancel's answer breaks it
	LogAlarms         []string      // data races, panics in the executors' logs
}

// Results are the checks' figures and, for every violation, one line of evidence.
type Results struct {
	// 1. no tenant in flight twice
	MaxInFlight       int
	MaxInFlightTenant string
	Overlaps          []string
	// 2. no completed stage re-run without an operator retry
	ReRuns         []string
	ReRunsRetried  int // completed stages run again after a retry (allowed)
	CompletedCalls int
	// 3. acknowledged operator commands honoured
	CancelsAcked     int
	CancelsHonoured  int
	CancelViolations []string
	// CancelsLost are acknowledged cancels of tasks whose plan ended and was then lost with
	// Redis's data (documented): nothing to check.
	CancelsLost      int
	RetriesAcked     int // tasks given a new run by an acknowledged retry
	RetriesHonoured  int
	RetryViolations  []string
	SubmissionsAcked int
	LostPlans        []string // acknowledged submissions whose plan is gone
	LostToDataLoss   []string // plans ended before Redis lost its data, no executor kept, or lost to a kill then a data loss (documented)
	// 4. no task stranded
	Stranded  []string
	PlansOpen []string
	// 5. the API's view equals Redis's
	Mismatches []string
	// Besides: executors that exited on their own or logged a panic or a data race, 5xx
	// answers other than 503.
	Exits        []string
	ServerErrors []string

	TasksByStatus map[string]int
	PlansByStatus map[string]int
}

// Violations counts every violation.
func (r Results) Violations() int {
	return len(r.Overlaps) + len(r.ReRuns) + len(r.CancelViolations) + len(r.RetryViolations) +
		len(r.LostPlans) + len(r.Stranded) + len(r.PlansOpen) + len(r.Mismatches) + len(r.Exits) + len(r.ServerErrors)
}

// Check computes the invariants from ev.
func Check(ev Evidence) Results {
	r := Results{MaxInFlight: ev.MaxInFlight, MaxInFlightTenant: ev.MaxInFlightTenant,
		TasksByStatus: map[string]int{}, PlansByStatus: map[string]int{}}
	for _, o := range ev.Overlaps {
		r.Overlaps = append(r.Overlaps, fmt.Sprintf("tenant %s in flight twice: %s | %s%s", o.Tenant, o.First, o.Second,
			faultsNear(ev.History, o.Second.Start)))
	}
	checkReRuns(ev, &r)
	checkSubmissions(ev, &r)
	checkCancels(ev, &r)
	checkRetries(ev, &r)
	checkStranded(ev, &r)
	checkViews(ev, &r)
	for _, e := range ev.History.Exits {
		r.Exits = append(r.Exits, fmt.Sprintf("%s incarnation %d exited on its own at %s: %s (log %s)",
			e.Name, e.Incarnation, e.At.Format("15:04:05.000"), e.Err, e.LogPath))
	}
	r.ServerErrors = append(r.ServerErrors, ev.History.ServerErrors...)
	r.Exits = append(r.Exits, ev.LogAlarms...)
	return r
}

// checkReRuns: a (plan, tenant, stage) called again after a call of it completed, with no
// operator retry of its task since that call started.
func checkReRuns(ev Evidence, r *Results) {
	byStage := map[string][]Call{}
	for _, c := range ev.Calls {
		byStage[c.Task+"/"+c.Stage] = append(byStage[c.Task+"/"+c.Stage], c)
		if c.Completed {
			r.CompletedCalls++
		}
	}
	for _, calls := range byStage {
		sort.Slice(calls, func(i, j int) bool { return calls[i].Start.Before(calls[j].Start) })
		var done *Call // the latest call that completed before the current one started
		for i := range calls {
			c := calls[i]
			if done != nil && !done.End.After(c.Start) {
				if retriedBetween(ev.History, c.Task, done.Start, c.Start) {
					r.ReRunsRetried++
				} else {
					r.ReRuns = append(r.ReRuns, fmt.Sprintf("%s re-run without a retry: completed %s, again %s%s",
						c.Tenant, done, c, faultsNear(ev.History, c.Start)))
				}
			}
			if c.Completed && (done == nil || c.End.After(done.End)) {
				done = &calls[i]
			}
		}
	}
	sort.Strings(r.ReRuns)
}

func retriedBetween(h *History, taskID string, from, to time.Time) bool {
	for _, rt := range h.RetriesOf(taskID) {
		if rt.Sent.After(from) && rt.Sent.Before(to) {
			return true
		}
	}
	return false
}

// checkCancels: an acknowledged cancel ends its task CANCELLED, and no stage call of the task
// starts later than the acknowledgement plus the grace.
func checkCancels(ev Evidence, r *Results) {
	for _, c := range ev.History.Commands {
		if c.Kind != "cancel" || !c.Acked {
			continue
		}
		r.CancelsAcked++
		var problems []string
		v, ok := ev.Snapshot.Tasks[c.TaskID]
		if (!ok || v.Gone()) && mayBeLost(ev, c.PlanID) {
			r.CancelsLost++
			continue
		}
		if !ok || v.Gone() {
			problems = append(problems, "task gone at the end")
		} else if v.Status() != statusCancelled || v.Redis != statusCancelled {
			problems = append(problems, fmt.Sprintf("ends %s (Redis %s; last error %s)", v.Status(), v.Redis, v.LastError))
		}
		if c.Status != "" && c.Status != statusCancelled {
			problems = append(problems, "the answer said "+c.Status)
		}
		for _, call := range ev.Calls {
			if call.Task == c.TaskID && call.Start.After(c.Answered.Add(ev.Grace)) {
				problems = append(problems, "called after: "+call.String())
			}
		}
		if len(problems) == 0 {
			r.CancelsHonoured++
			continue
		}
		r.CancelViolations = append(r.CancelViolations, fmt.Sprintf("cancel of %s (task %s) via %s answered %s: %s%s",
			c.Tenant, shortID(c.TaskID), c.Via, c.Answered.Format("15:04:05.000"), strings.Join(problems, "; "),
			faultsNear(ev.History, c.Answered)))
	}
}

// checkRetries: a task an acknowledged retry gave a new run has at least that run's attempt.
func checkRetries(ev Evidence, r *Results) {
	for _, rt := range ev.History.Retries {
		r.RetriesAcked++
		v, ok := ev.Snapshot.Tasks[rt.TaskID]
		switch {
		case !ok:
			r.RetryViolations = append(r.RetryViolations, fmt.Sprintf("retry of %s (task %s): task not found at the end", rt.Tenant, shortID(rt.TaskID)))
		case v.Attempt < rt.MinAttempt || v.RedisAttempt < rt.MinAttempt:
			r.RetryViolations = append(r.RetryViolations, fmt.Sprintf("retry of %s (task %s) acknowledged at %s: attempt %d (Redis %d) at the end, want ≥ %d%s",
				rt.Tenant, shortID(rt.TaskID), rt.Acked.Format("15:04:05.000"), v.Attempt, v.RedisAttempt, rt.MinAttempt, faultsNear(ev.History, rt.Acked)))
		default:
			r.RetriesHonoured++
		}
	}
}

// checkSubmissions: every acknowledged submission's plan exists at the end, unless it ended
// before Redis lost its data (no executor need keep such a plan) or an executor's kill then a
// data loss may have cost it (docs/degraded.md).
func checkSubmissions(ev Evidence, r *Results) {
	for _, s := range ev.History.Submissions {
		if s.PlanID == "" {
			continue
		}
		r.SubmissionsAcked++
		pv, ok := ev.Snapshot.Plans[s.PlanID]
		if ok && (pv.Redis != "" || anyFound(pv.API)) {
			continue
		}
		if mayBeLost(ev, s.PlanID) {
			r.LostToDataLoss = append(r.LostToDataLoss, s.PlanID)
			continue
		}
		r.LostPlans = append(r.LostPlans, fmt.Sprintf("plan %s (submitted %s via %s, tenants %v) is gone: API %v, Redis %q",
			s.PlanID, s.Acked.Format("15:04:05.000"), s.Via, s.Tenants, planAPI(pv), planRedis(pv)))
	}
}

func anyFound(api map[string]string) bool {
	for _, s := range api {
		if isStatus(s) {
			return true
		}
	}
	return false
}

// mayBeLost reports whether plan id (or its tasks) may be gone, as docs/degraded.md says:
// it ended before Redis lost its data (no executor need keep an ended plan), or an executor
// was killed after its submission and Redis lost its data after that kill (the double fault:
// a restarted executor holds nothing, so what only it held is lost with Redis's data).
func mayBeLost(ev Evidence, id string) bool {
	return endedBeforeDataLoss(ev, id) || killedThenLost(ev.History, id)
}

// killedThenLost reports whether an executor was killed after plan id was submitted and
// Redis lost its data after that kill.
func killedThenLost(h *History, id string) bool {
	for _, s := range h.Submissions {
		if s.PlanID != id {
			continue
		}
		for _, f := range h.Faults {
			if f.Kind == FaultExecKill && f.Start.After(s.Sent) && dataLostAfter(h, f.Start) {
				return true
			}
		}
	}
	return false
}

// endedBeforeDataLoss reports whether the workload saw plan id end (with every task) before
// Redis lost its data: docs/degraded.md allows such a plan, and its tasks, to be gone.
func endedBeforeDataLoss(ev Evidence, id string) bool {
	for _, p := range ev.Plans {
		if p.ID == id && p.Finished {
			return dataLostAfter(ev.History, p.FinishedAt)
		}
	}
	return false
}

func planAPI(pv *PlanView) map[string]string {
	if pv == nil {
		return nil
	}
	return pv.API
}

func planRedis(pv *PlanView) string {
	if pv == nil {
		return ""
	}
	return pv.Redis
}

func dataLostAfter(h *History, at time.Time) bool {
	for _, f := range h.Faults {
		if f.Kind == FaultRedisRestart && f.Start.After(at) {
			return true
		}
	}
	return false
}

// checkStranded: every task ended COMPLETED, FAILED or CANCELLED, and every plan ended.
func checkStranded(ev Evidence, r *Results) {
	for _, id := range sortedPlanIDs(ev.Snapshot) {
		pv := ev.Snapshot.Plans[id]
		if pv.Gone() { // an acknowledged one is a lost plan (check 3), unless documented
			r.PlansByStatus["GONE"]++
			continue
		}
		st := pv.Status()
		r.PlansByStatus[st]++
		if !pv.Ended() {
			r.PlansOpen = append(r.PlansOpen, fmt.Sprintf("plan %s is %s (API %v, Redis %q) %s%s%s", id, st, pv.API, pv.Redis, pv.Reason, raw(pv.RedisRaw), raw(pv.Dispatch)))
		}
	}
	ids := make([]string, 0, len(ev.Snapshot.Tasks))
	for id := range ev.Snapshot.Tasks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		v := ev.Snapshot.Tasks[id]
		if pv, ok := ev.Snapshot.Plans[v.PlanID]; ok && pv.Gone() {
			continue // lost with its plan: check 3
		}
		st := v.Status()
		if v.Gone() {
			st = "GONE"
			if mayBeLost(ev, v.PlanID) {
				r.TasksByStatus["GONE (documented)"]++
				continue
			}
		}
		r.TasksByStatus[st]++
		if !v.Ended() {
			plan := "?"
			if pv, ok := ev.Snapshot.Plans[v.PlanID]; ok {
				plan = pv.Status()
			}
			r.Stranded = append(r.Stranded, fmt.Sprintf("task %s of %s (plan %s, %s) is %s (Redis %q, lists %v, GETs %v, attempt %d, executor %s, last error %q; tenant index %s, active %s, lease %q)",
				shortID(id), v.TenantID, shortID(v.PlanID), plan, st, v.Redis, v.List, v.Get, v.Attempt, v.Executor, v.LastError,
				shortID(v.Index), shortID(v.Active), v.Lease))
		}
	}
	// Tasks the workload saw that no plan lists any more.
	for _, p := range ev.Plans {
		for id, tk := range p.Tasks {
			if _, ok := ev.Snapshot.Tasks[id]; !ok {
				if _, planThere := ev.Snapshot.Plans[p.ID]; planThere {
					r.Stranded = append(r.Stranded, fmt.Sprintf("task %s of %s (plan %s), last seen %s, is gone", shortID(id), tk.TenantID, shortID(p.ID), tk.Status))
				}
			}
		}
	}
}

// checkViews: every task's status through every executor's API (task list and GET) equals
// its Redis hash's; every plan's likewise.
func checkViews(ev Evidence, r *Results) {
	for _, id := range sortedPlanIDs(ev.Snapshot) {
		pv := ev.Snapshot.Plans[id]
		if pv.Gone() {
			continue
		}
		for _, e := range sortedKeys(pv.API) {
			if pv.API[e] != pv.Redis {
				r.Mismatches = append(r.Mismatches, fmt.Sprintf("plan %s: %s says %s, Redis %q%s", id, e, pv.API[e], pv.Redis, raw(pv.RedisRaw)))
			}
		}
	}
	ids := make([]string, 0, len(ev.Snapshot.Tasks))
	for id := range ev.Snapshot.Tasks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		v := ev.Snapshot.Tasks[id]
		if pv, ok := ev.Snapshot.Plans[v.PlanID]; ok && pv.Gone() {
			continue
		}
		if v.Gone() {
			continue // absent everywhere: the views agree (whether it may be gone is check 4's)
		}
		for _, e := range sortedKeys(v.List) {
			if v.List[e] != v.Redis {
				r.Mismatches = append(r.Mismatches, fmt.Sprintf("task %s of %s: %s's plan task list says %s, Redis %q%s", id, v.TenantID, e, v.List[e], v.Redis, raw(v.RedisRaw)))
			}
		}
		for _, e := range sortedKeys(v.Get) {
			if v.Get[e] != v.Redis {
				r.Mismatches = append(r.Mismatches, fmt.Sprintf("task %s of %s: %s's GET /v1/tasks says %s, Redis %q%s", id, v.TenantID, e, v.Get[e], v.Redis, raw(v.RedisRaw)))
			}
		}
	}
}

func raw(s string) string {
	if s == "" {
		return ""
	}
	return " [" + s + "]"
}

func sortedPlanIDs(s *Snapshot) []string {
	ids := make([]string, 0, len(s.Plans))
	for id := range s.Plans {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// faultsNear names the faults whose window, widened by 5 s, contains at.
func faultsNear(h *History, at time.Time) string {
	fs := h.FaultAt(at, 5*time.Second)
	if len(fs) == 0 {
		return ""
	}
	var names []string
	for _, f := range fs {
		names = append(names, fmt.Sprintf("%s on %s %s–%s", f.Kind, f.Target, f.Start.Format("15:04:05.000"), f.End.Format("15:04:05.000")))
	}
	return " [near " + strings.Join(names, ", ") + "]"
}
