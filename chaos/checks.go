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
	Reaps             []Reap        // the tasks the executors judged INTERRUPTED (their logs)
	LeaseTTL          time.Duration // the executors' --lease-ttl
}

// Results are the checks' figures and, for every violation, one line of evidence.
type Results struct {
	// 1. no tenant in flight twice
	MaxInFlight       int
	MaxInFlightTenant string
	Overlaps          []string
	StaleCalls        []string // calls of a lower fence epoch than one the target answered before for the task
	FenceMissing      []string // calls without a valid Executor-Fence
	// 2. no completed stage re-run without an operator retry
	ReRuns         []string
	ReRunsRetried  int // completed stages run again by a retry's run with the in-doubt key (allowed)
	CompletedCalls int
	// No false INTERRUPTED under latency: tasks reaped whose run beat last within a
	// conn-latency window (checkLatency); the windows, and the reapings during them.
	LatencyInterrupts []string
	LatencyWindows    int
	ReapedInLatency   int
	Reaped            int // tasks judged INTERRUPTED, in all
	// 3. acknowledged operator commands honoured
	CancelsAcked     int
	CancelsHonoured  int
	CancelViolations []string
	// CancelsSuperseded are acknowledged cancels of tasks an operator's retry may have given
	// a new run after the cancel took effect (supersededByRetry): not checked.
	CancelsSuperseded int
	// CancelsLost are acknowledged cancels of tasks whose plan ended and was then lost with
	// Redis's data (documented): nothing to check.
	CancelsLost      int
	RetriesAcked     int // tasks given a new run by an acknowledged retry
	RetriesUndecided int // tasks a retry whose answer never came may have given a new run (not checked)
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
	return len(r.Overlaps) + len(r.StaleCalls) + len(r.FenceMissing) + len(r.ReRuns) + len(r.LatencyInterrupts) + len(r.CancelViolations) + len(r.RetryViolations) +
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
	checkFences(ev, &r)
	checkReRuns(ev, &r)
	checkLatency(ev, &r)
	r.Reaped = len(ev.Reaps)
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

// checkReRuns: a (plan, tenant, stage) called again after a call of it completed (the target
// answered 2xx to a caller still waiting) is allowed only as the retry of an in-doubt attempt:
// the new call carries the completed call's Idempotency-Key (the in-doubt attempt's, which the
// retry sends again), comes from a later run than the completed call's, an operator retry of
// the task was sent between the completed call's start and its own (acknowledged, or whose
// answer never came: it may have taken effect), and its run re-calls no other completed stage
// (one stage at most is in doubt per interrupted run). A completed stage called again under
// another key is a violation, after a retry or not.
func checkReRuns(ev Evidence, r *Results) {
	byStage := map[string][]Call{}
	for _, c := range ev.Calls {
		byStage[c.Task+"/"+c.Stage] = append(byStage[c.Task+"/"+c.Stage], c)
		if c.Completed {
			r.CompletedCalls++
		}
	}
	type runKey struct {
		task string
		run  int
	}
	reRunBy := map[runKey]map[string]Call{} // allowed re-runs: run → stage → its first re-call
	for _, calls := range byStage {
		sort.Slice(calls, func(i, j int) bool { return calls[i].Start.Before(calls[j].Start) })
		var done *Call // the latest call that completed before the current one started
		for i := range calls {
			c := calls[i]
			if done != nil && !done.End.After(c.Start) {
				retried := retriedBetween(ev.History, c.Task, done.Start, c.Start)
				switch {
				case c.Key != done.Key:
					r.ReRuns = append(r.ReRuns, fmt.Sprintf("%s re-run under a new key (%s): completed %s, again %s%s",
						c.Tenant, retryWord(retried), done, c, faultsBetween(ev.History, done.Start, c.Start)))
				case c.Run <= done.Run:
					r.ReRuns = append(r.ReRuns, fmt.Sprintf("%s re-run by run %d, not by a later run: completed %s, again %s%s",
						c.Tenant, c.Run, done, c, faultsBetween(ev.History, done.Start, c.Start)))
				case !retried:
					r.ReRuns = append(r.ReRuns, fmt.Sprintf("%s re-run without a retry: completed %s, again %s%s",
						c.Tenant, done, c, faultsBetween(ev.History, done.Start, c.Start)))
				default:
					k := runKey{c.Task, c.Run}
					if reRunBy[k] == nil {
						reRunBy[k] = map[string]Call{}
					}
					if _, seen := reRunBy[k][c.Stage]; !seen { // later calls of it: the same re-run's attempts
						reRunBy[k][c.Stage] = c
					}
				}
			}
			if c.Completed && (done == nil || c.End.After(done.End)) {
				done = &calls[i]
			}
		}
	}
	for _, stages := range reRunBy {
		r.ReRunsRetried += len(stages)
		if len(stages) < 2 {
			continue
		}
		calls := make([]Call, 0, len(stages))
		for _, c := range stages {
			calls = append(calls, c)
		}
		sort.Slice(calls, func(i, j int) bool { return calls[i].StageIndex < calls[j].StageIndex })
		var names []string
		for _, c := range calls {
			names = append(names, c.String())
		}
		r.ReRuns = append(r.ReRuns, fmt.Sprintf("%s run %d re-ran %d completed stages with their in-doubt keys (one at most is in doubt per interrupted run): %s%s",
			calls[0].Tenant, calls[0].Run, len(calls), strings.Join(names, " | "), faultsNear(ev.History, calls[0].Start)))
	}
	sort.Strings(r.ReRuns)
}

func retryWord(retried bool) string {
	if retried {
		return "after a retry"
	}
	return "without a retry"
}

// retriedBetween reports whether an operator retry of task taskID was sent between from and
// to: acknowledged, or undecided (no answer came: it may have taken effect).
func retriedBetween(h *History, taskID string, from, to time.Time) bool {
	for _, rt := range h.RetriesOf(taskID) {
		if rt.Sent.After(from) && rt.Sent.Before(to) {
			return true
		}
	}
	return false
}

// checkFences: every stage call carries an Executor-Fence naming its tenant, and no call's
// epoch is lower than that of a call of the same task the target answered before it arrived
// (a stale caller served: a run superseded by a newer one still calling).
func checkFences(ev Evidence, r *Results) {
	byTask := map[string][]Call{}
	for _, c := range ev.Calls {
		byTask[c.Task] = append(byTask[c.Task], c)
		if !c.FenceOK {
			r.FenceMissing = append(r.FenceMissing, fmt.Sprintf("%s: Executor-Fence %q (want %s:<epoch ≥ 1>)", c, c.Fence, c.Tenant))
		}
	}
	for _, calls := range byTask {
		for _, c := range calls {
			if !c.FenceOK {
				continue
			}
			var newer *Call // the answered call of the highest epoch before c arrived
			for i, d := range calls {
				if d.FenceOK && d.Status != 0 && !d.End.After(c.Start) && d.Epoch > c.Epoch && (newer == nil || d.Epoch > newer.Epoch) {
					newer = &calls[i]
				}
			}
			if newer != nil {
				r.StaleCalls = append(r.StaleCalls, fmt.Sprintf("%s: stale caller served: epoch %d after the target answered epoch %d: %s, then %s%s",
					c.Tenant, c.Epoch, newer.Epoch, newer, c, faultsNear(ev.History, c.Start)))
			}
		}
	}
	sort.Strings(r.StaleCalls)
	sort.Strings(r.FenceMissing)
}

// latencyGuard is how long after a fault's end a run lost to it may still have beaten: its
// lease deadline comes at most TTL − TTL/5 after its last confirmed refresh, and it writes
// nothing after it. checkLatency counts a reaped run against a conn-latency window only when
// its last heartbeat is later than the previous fault's end + 2 TTLs (a margin for the
// executor noticing a data loss, which stops a run a little later).
func latencyGuard(ttl time.Duration) time.Duration { return 2 * ttl }

// checkLatency: no task judged INTERRUPTED for a conn-latency (a slow link is not a lost
// owner). Faults come one at a time, so a reaped task (the reaper's log line, with the heartbeat
// it judged) is counted against a latency window when its run's last heartbeat falls within
// it, or within a heartbeat period (TTL/3) before it (a run that beat just before the latency
// began and never again): such a run was alive after the previous fault's effects were over
// (the heartbeat is later than that fault's end + latencyGuard; the injector leaves room for
// it) and stopped beating before the latency ended (a run alive after the latency beat again
// after it, and the next fault waits a lease TTL after it). The reapings whose time falls in a
// latency window are counted too, whatever their heartbeat.
func checkLatency(ev Evidence, r *Results) {
	ttl := ev.LeaseTTL
	if ttl <= 0 {
		ttl = 3 * time.Second
	}
	faults := append([]FaultRecord(nil), ev.History.Faults...)
	sort.Slice(faults, func(i, j int) bool { return faults[i].Start.Before(faults[j].Start) })
	for i, f := range faults {
		if f.Kind != FaultConnLatency {
			continue
		}
		r.LatencyWindows++
		from := f.Start.Add(-ttl / 3)
		if i > 0 {
			if guard := faults[i-1].End.Add(latencyGuard(ttl)); guard.After(from) {
				from = guard
			}
		}
		for _, rp := range ev.Reaps {
			if !rp.At.Before(f.Start) && !rp.At.After(f.End) {
				r.ReapedInLatency++
			}
			if rp.HeartbeatAt.Before(from) || rp.HeartbeatAt.After(f.End) {
				continue
			}
			r.LatencyInterrupts = append(r.LatencyInterrupts, fmt.Sprintf("%s (task %s, plan %s) reaped INTERRUPTED by %s at %s, its last heartbeat %s: within %s on %s %s–%s (%s), no other fault then; %s",
				rp.Tenant, shortID(rp.TaskID), shortID(rp.PlanID), rp.By, rp.At.Format("15:04:05.000"), rp.HeartbeatAt.Format("15:04:05.000"),
				f.Kind, f.Target, f.Start.Format("15:04:05.000"), f.End.Format("15:04:05.000"), f.Note, rp.Where))
		}
	}
	sort.Strings(r.LatencyInterrupts)
}

// checkCancels: an acknowledged cancel ends its task CANCELLED, and no stage call of the task
// starts later than the acknowledgement plus the grace.
func checkCancels(ev Evidence, r *Results) {
	for _, c := range ev.History.Commands {
		if c.Kind != "cancel" || !c.Acked {
			continue
		}
		r.CancelsAcked++
		if supersededByRetry(ev.History, c) {
			r.CancelsSuperseded++
			continue
		}
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

// retryReach bounds how long after it was first sent a retry whose answer never came may
// still take effect: its tries (30 s at most) and the last one's request timeout.
const retryReach = 30*time.Second + requestTimeout

// supersededByRetry reports whether an operator's retry of the cancelled task may have taken
// effect after the cancel did (the operator on call reads a task INTERRUPTED and retries it
// while the workload cancels it: a retry of a CANCELLED task gives it a new run, as the API
// says): a retry acknowledged after the cancel was sent, or one whose answer never came sent
// at most retryReach before it. Such a cancel is not checked (CancelsSuperseded).
func supersededByRetry(h *History, c CommandRecord) bool {
	for _, rt := range h.RetriesOf(c.TaskID) {
		if !rt.Undecided && rt.Acked.After(c.Sent) {
			return true
		}
		if rt.Undecided && rt.Sent.After(c.Sent.Add(-retryReach)) {
			return true
		}
	}
	return false
}

// checkRetries: a task an acknowledged retry gave a new run has at least that run's attempt.
func checkRetries(ev Evidence, r *Results) {
	for _, rt := range ev.History.Retries {
		if rt.Undecided {
			r.RetriesUndecided++
			continue
		}
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

// faultsBetween names the faults whose window, widened by 5 s, meets [from, to]: what came
// between a completed call and its re-run.
func faultsBetween(h *History, from, to time.Time) string {
	var names []string
	for _, f := range h.Faults {
		end := f.End
		if end.IsZero() {
			end = time.Now()
		}
		if !to.Before(f.Start.Add(-5*time.Second)) && !from.After(end.Add(5*time.Second)) {
			names = append(names, fmt.Sprintf("%s on %s %s–%s", f.Kind, f.Target, f.Start.Format("15:04:05.000"), f.End.Format("15:04:05.000")))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return " [faults between: " + strings.Join(names, ", ") + "]"
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
