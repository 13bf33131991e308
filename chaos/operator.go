//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// Operator is the SRE (docs/runbook.md), while faults are injected (Watch) and after them
// (Recover): a plan PAUSED because an executor was lost is resumed (`plan resume`), then its
// INTERRUPTED tasks are retried from their checkpoints, all at once (`plan retry
// --from-checkpoint`) or one tenant at a time (`retry --tenant T --from-checkpoint`), a coin
// toss each time; INTERRUPTED tasks of other plans likewise; a task PAUSED on its own is
// resumed. Every command goes to a random executor, and to another one while the answer is
// none or 503 (an executor cut off, frozen or killed). Every command is recorded, and every
// task a retry gave a new run (or, its answer undecided, may have given one).
type Operator struct {
	c      *Cluster
	api    *API
	hist   *History
	rng    *Rand
	w      *Workload
	during bool          // acting while faults are injected (Watch)
	cmdFor time.Duration // bound on one command, its tries included

	pausedSeen map[string]int  // task id → rounds seen PAUSED in a RUNNING plan
	skipped    map[string]int  // task id → times a plan retry skipped it
	done       map[string]bool // plans read ended (with every task) during the recovery
	state      map[string]string
}

// stallLimit ends the recovery early when nothing it can see changed for this long: what is
// left is stranded, and the SRE has no command for it.
const stallLimit = 60 * time.Second

// retrySkips is how often a task skipped by plan retry is tried before the SRE gives up on it.
const retrySkips = 3

// NewOperator returns the SRE of the cluster.
func NewOperator(c *Cluster, api *API, hist *History, rng *Rand, w *Workload) *Operator {
	return &Operator{c: c, api: api, hist: hist, rng: rng, w: w, cmdFor: 30 * time.Second, pausedSeen: map[string]int{},
		skipped: map[string]int{}, done: map[string]bool{}, state: map[string]string{}}
}

// Watch is the SRE on call while faults are injected, until ctx ends: every 2–4 s it reads
// every plan the workload has not seen end through random executors and acts on what it sees
// as Recover does (a command answered 503, or not at all, goes to another executor). Its
// commands and retries are recorded During.
func (o *Operator) Watch(ctx context.Context) {
	o.during, o.cmdFor = true, 15*time.Second
	for sleepCtx(ctx, 2*time.Second+time.Duration(o.rng.Float64()*float64(2*time.Second))) {
		ids := o.w.unfinished()
		for _, id := range ids {
			if ctx.Err() != nil {
				return
			}
			o.recoverPlan(ctx, id)
		}
	}
}

func (o *Operator) pick() *Executor { return o.c.Pick(o.rng) }

// Recover acts on every plan until every plan and every task has ended, for at most
// timeout; it returns the plans still not ended then (nil when all did).
func (o *Operator) Recover(ctx context.Context, timeout time.Duration) []string {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	lastChange, lastState := time.Now(), ""
	for round := 1; ; round++ {
		var open []string
		for _, id := range o.AllPlans(ctx) {
			if o.done[id] {
				continue
			}
			if o.recoverPlan(ctx, id) {
				o.done[id] = true
			} else {
				open = append(open, id)
			}
		}
		if len(open) == 0 && o.noNewPlan(ctx) {
			o.hist.Notef("recovery: every plan ended after %d rounds", round)
			return nil
		}
		var fp strings.Builder
		for _, id := range open {
			fp.WriteString(o.state[id])
		}
		if fp.String() != lastState {
			lastChange, lastState = time.Now(), fp.String()
		} else if time.Since(lastChange) > stallLimit {
			o.hist.Notef("recovery: %d plans not ended and nothing changed for %s: %v", len(open), stallLimit, open)
			return open
		}
		if !sleepCtx(ctx, time.Second) {
			o.hist.Notef("recovery: %d plans not ended after %s: %v", len(open), timeout, open)
			return open
		}
	}
}

// quietFor is how long Recover waits, once every plan it knows ended, for a plan whose
// creation was still under way: a submission the workload gave up on when it stopped goes on
// on the server (a creation, once begun, is not cancelled) and shows only then.
const quietFor = 2 * time.Second

// noNewPlan reports whether, quietFor later, no plan has appeared that Recover has not seen
// end.
func (o *Operator) noNewPlan(ctx context.Context) bool {
	if !sleepCtx(ctx, quietFor) {
		return true // out of time: what is open is reported by the caller's next checks
	}
	for _, id := range o.AllPlans(ctx) {
		if !o.done[id] {
			return false
		}
	}
	return true
}

// recoverPlan reads plan id and acts on it; it reports whether the plan and its tasks all
// ended.
func (o *Operator) recoverPlan(ctx context.Context, id string) bool {
	p, tasks, via, ok := o.read(ctx, id)
	if !ok {
		return false
	}
	o.w.Observe(via, p, tasks)
	var fp strings.Builder
	fmt.Fprintf(&fp, "%s %s;", id, p.Status)
	for _, tk := range tasks {
		fmt.Fprintf(&fp, "%s %s %d;", tk.TaskID, tk.Status, tk.Attempt)
	}
	o.state[id] = fp.String()
	allEnded := true
	var interrupted []wireTask
	for _, tk := range tasks {
		allEnded = allEnded && terminal(tk.Status)
		switch tk.Status {
		case statusInterrupted:
			if o.skipped[tk.TaskID] < retrySkips {
				interrupted = append(interrupted, tk)
			}
		case statusPaused:
			if p.Status == statusRunning {
				o.pausedSeen[tk.TaskID]++
				if o.pausedSeen[tk.TaskID] >= 3 {
					o.tenantResume(ctx, tk)
					o.pausedSeen[tk.TaskID] = 0
				}
			}
		}
	}
	if terminal(p.Status) && allEnded {
		return true
	}
	if p.Status == statusPaused {
		o.planResume(ctx, p)
	}
	if len(interrupted) > 0 {
		if o.rng.Intn(2) == 0 {
			o.planRetry(ctx, p, interrupted)
		} else {
			for _, tk := range interrupted {
				o.tenantRetry(ctx, tk)
			}
		}
	}
	return false
}

// read returns plan id and its tasks through one executor (trying others while none answers).
func (o *Operator) read(ctx context.Context, id string) (wirePlan, []wireTask, string, bool) {
	rctx, cancel := context.WithTimeout(ctx, o.cmdFor)
	defer cancel()
	var p wirePlan
	var tl wireTaskList
	pa, _ := o.api.Try(rctx, o.pick, http.MethodGet, "/v1/plans/"+id+"?include=taskIds", nil, nil)
	if !pa.OK() || pa.Decode(&p) != nil {
		return p, nil, "", false
	}
	ta, _ := o.api.Try(rctx, o.pick, http.MethodGet, "/v1/plans/"+id+"/tasks", nil, nil)
	if !ta.OK() || ta.Decode(&tl) != nil {
		return p, nil, "", false
	}
	return p, tl.Tasks, pa.Via + "/" + ta.Via, true
}

func (o *Operator) planResume(ctx context.Context, p wirePlan) {
	rctx, cancel := context.WithTimeout(ctx, o.cmdFor)
	defer cancel()
	rec := CommandRecord{Kind: "plan-resume", PlanID: p.PlanID, Sent: time.Now(), Detail: p.Reason, During: o.during}
	ans, tries := o.api.Try(rctx, o.pick, http.MethodPost, "/v1/plans/"+p.PlanID+"/resume", nil, nil)
	rec.Tries, rec.Code, rec.Via, rec.Answered, rec.Acked = tries, ans.Code, ans.Via, ans.Got, ans.OK()
	if !ans.OK() {
		rec.Detail = ans.Problem()
	}
	o.hist.AddCommand(rec)
}

func (o *Operator) planRetry(ctx context.Context, p wirePlan, interrupted []wireTask) {
	rctx, cancel := context.WithTimeout(ctx, o.cmdFor)
	defer cancel()
	yes := true
	body := wirePlanRetryBody{Status: []string{statusInterrupted}, FromCheckpoint: &yes}
	rec := CommandRecord{Kind: "plan-retry", PlanID: p.PlanID, Sent: time.Now(), During: o.during}
	ans, tries := o.api.Try(rctx, o.pick, http.MethodPost, "/v1/plans/"+p.PlanID+"/retry", body, nil)
	rec.Tries, rec.Code, rec.Via, rec.Answered, rec.Acked = tries, ans.Code, ans.Via, ans.Got, ans.OK()
	seen := map[string]wireTask{}
	for _, tk := range interrupted {
		seen[tk.TaskID] = tk
	}
	var out wirePlanRetry
	if !ans.OK() {
		rec.Detail = ans.Problem()
	} else if err := ans.Decode(&out); err != nil {
		rec.Detail = err.Error()
	}
	var names []string
	retried := map[string]bool{}
	for _, r := range out.Retried {
		o.hist.AddRetry(RetryRecord{Tenant: r.TenantID, PlanID: p.PlanID, TaskID: r.TaskID, Sent: rec.Sent,
			Acked: ans.Got, MinAttempt: seen[r.TaskID].Attempt + 1, Via: ans.Via, Kind: rec.Kind, During: o.during})
		names = append(names, r.TenantID)
		retried[r.TaskID] = true
	}
	if ans.Undecided { // a try may have retried what the answer does not name
		for _, tk := range interrupted {
			if !retried[tk.TaskID] {
				o.hist.AddRetry(RetryRecord{Tenant: tk.TenantID, PlanID: p.PlanID, TaskID: tk.TaskID, Sent: rec.Sent,
					MinAttempt: tk.Attempt + 1, Kind: rec.Kind, During: o.during, Undecided: true})
			}
		}
	}
	for _, s := range out.Skipped {
		names = append(names, fmt.Sprintf("%s skipped (%s)", s.TenantID, s.Reason))
		if o.skipped[s.TaskID]++; o.skipped[s.TaskID] == retrySkips {
			o.hist.Notef("operator: plan retry skipped %s (task %s) %d times: %s; given up", s.TenantID, s.TaskID, retrySkips, s.Reason)
		}
	}
	if len(names) > 0 {
		sort.Strings(names)
		rec.Detail = strings.Join(names, ", ")
	}
	o.hist.AddCommand(rec)
}

// tenantRetry retries one INTERRUPTED task from its checkpoint (POST
// /v1/tenants/{t}/retry {"fromCheckpoint": true}: the tenant's latest task).
func (o *Operator) tenantRetry(ctx context.Context, tk wireTask) {
	rctx, cancel := context.WithTimeout(ctx, o.cmdFor)
	defer cancel()
	yes := true
	rec := CommandRecord{Kind: "tenant-retry", Tenant: tk.TenantID, PlanID: tk.PlanID, TaskID: tk.TaskID, Sent: time.Now(), During: o.during}
	ans, tries := o.api.Try(rctx, o.pick, http.MethodPost, "/v1/tenants/"+url.PathEscape(tk.TenantID)+"/retry", wireRetryBody{FromCheckpoint: &yes}, nil)
	rec.Tries, rec.Code, rec.Via, rec.Answered, rec.Acked = tries, ans.Code, ans.Via, ans.Got, ans.OK()
	var got wireTask
	var decodeErr error
	if ans.OK() {
		decodeErr = ans.Decode(&got)
	}
	switch {
	case !ans.OK():
		rec.Detail = ans.Problem()
	case decodeErr != nil:
		rec.Detail = decodeErr.Error()
	case got.TaskID != tk.TaskID:
		// The tenant's latest task is another one: a retry of it is no retry of tk.
		rec.Detail = fmt.Sprintf("retried task %s (attempt %d), not %s", got.TaskID, got.Attempt, tk.TaskID)
		o.hist.AddRetry(RetryRecord{Tenant: got.TenantID, PlanID: got.PlanID, TaskID: got.TaskID, Sent: rec.Sent,
			Acked: ans.Got, MinAttempt: got.Attempt, Via: ans.Via, Kind: rec.Kind, During: o.during})
	default:
		rec.Detail = fmt.Sprintf("attempt %d, %s", got.Attempt, got.Status)
		o.hist.AddRetry(RetryRecord{Tenant: tk.TenantID, PlanID: tk.PlanID, TaskID: tk.TaskID, Sent: rec.Sent,
			Acked: ans.Got, MinAttempt: tk.Attempt + 1, Via: ans.Via, Kind: rec.Kind, During: o.during})
	}
	if (ans.Undecided || ans.OK()) && got.TaskID != tk.TaskID { // tk may have been retried, unseen
		o.hist.AddRetry(RetryRecord{Tenant: tk.TenantID, PlanID: tk.PlanID, TaskID: tk.TaskID, Sent: rec.Sent,
			MinAttempt: tk.Attempt + 1, Kind: rec.Kind, During: o.during, Undecided: true})
	}
	o.hist.AddCommand(rec)
}

func (o *Operator) tenantResume(ctx context.Context, tk wireTask) {
	rctx, cancel := context.WithTimeout(ctx, o.cmdFor)
	defer cancel()
	rec := CommandRecord{Kind: "tenant-resume", Tenant: tk.TenantID, PlanID: tk.PlanID, TaskID: tk.TaskID, Sent: time.Now(), During: o.during}
	ans, tries := o.api.Try(rctx, o.pick, http.MethodPost, "/v1/tenants/"+url.PathEscape(tk.TenantID)+"/resume", nil, nil)
	rec.Tries, rec.Code, rec.Via, rec.Answered, rec.Acked = tries, ans.Code, ans.Via, ans.Got, ans.OK()
	if !ans.OK() {
		rec.Detail = ans.Problem()
	}
	o.hist.AddCommand(rec)
}

// AllPlans returns the id of every plan anyone knows: the workload's, every executor's
// listing (GET /v1/plans, every page) and Redis's index of plans.
func (o *Operator) AllPlans(ctx context.Context) []string {
	ids := map[string]bool{}
	for _, p := range o.w.Plans() {
		ids[p.ID] = true
	}
	for _, e := range o.c.Executors {
		if !e.Up() {
			continue
		}
		for cursor := ""; ; {
			path := "/v1/plans?limit=1000&include=taskIds"
			if cursor != "" {
				path += "&cursor=" + cursor
			}
			rctx, cancel := context.WithTimeout(ctx, requestTimeout)
			ans := o.api.Do(rctx, e, http.MethodGet, path, nil, nil)
			cancel()
			var page wirePlanList
			if !ans.OK() || ans.Decode(&page) != nil {
				break
			}
			for _, p := range page.Plans {
				ids[p.PlanID] = true
			}
			if cursor = page.NextCursor; cursor == "" {
				break
			}
		}
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if fromRedis, err := o.c.RDB.ZRange(rctx, "executor:plans", 0, -1).Result(); err == nil {
		for _, id := range fromRedis {
			ids[id] = true
		}
	}
	out := make([]string, 0, len(ids))
	for id := range ids {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}
