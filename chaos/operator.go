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

// Operator is the SRE after the run (docs/runbook.md): a plan PAUSED because an executor was
// lost is resumed (`plan resume`), then its INTERRUPTED tasks are retried from their
// checkpoints (`plan retry --from-checkpoint`); INTERRUPTED tasks of other plans likewise; a
// task PAUSED on its own is resumed. Every command is recorded, and every task a retry gave a
// new run.
type Operator struct {
	c    *Cluster
	api  *API
	hist *History
	rng  *Rand
	w    *Workload

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
	return &Operator{c: c, api: api, hist: hist, rng: rng, w: w, pausedSeen: map[string]int{},
		skipped: map[string]int{}, done: map[string]bool{}, state: map[string]string{}}
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
		if len(open) == 0 {
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
		o.planRetry(ctx, p, interrupted)
	}
	return false
}

// read returns plan id and its tasks through one executor (trying others while none answers).
func (o *Operator) read(ctx context.Context, id string) (wirePlan, []wireTask, string, bool) {
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
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
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	rec := CommandRecord{Kind: "plan-resume", PlanID: p.PlanID, Sent: time.Now(), Detail: p.Reason}
	ans, tries := o.api.Try(rctx, o.pick, http.MethodPost, "/v1/plans/"+p.PlanID+"/resume", nil, nil)
	rec.Tries, rec.Code, rec.Via, rec.Answered, rec.Acked = tries, ans.Code, ans.Via, ans.Got, ans.OK()
	if !ans.OK() {
		rec.Detail = ans.Problem()
	}
	o.hist.AddCommand(rec)
}

func (o *Operator) planRetry(ctx context.Context, p wirePlan, interrupted []wireTask) {
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	yes := true
	body := wirePlanRetryBody{Status: []string{statusInterrupted}, FromCheckpoint: &yes}
	rec := CommandRecord{Kind: "plan-retry", PlanID: p.PlanID, Sent: time.Now()}
	ans, tries := o.api.Try(rctx, o.pick, http.MethodPost, "/v1/plans/"+p.PlanID+"/retry", body, nil)
	rec.Tries, rec.Code, rec.Via, rec.Answered, rec.Acked = tries, ans.Code, ans.Via, ans.Got, ans.OK()
	if !ans.OK() {
		rec.Detail = ans.Problem()
		o.hist.AddCommand(rec)
		return
	}
	var out wirePlanRetry
	if err := ans.Decode(&out); err != nil {
		rec.Detail = err.Error()
		o.hist.AddCommand(rec)
		return
	}
	seen := map[string]wireTask{}
	for _, tk := range interrupted {
		seen[tk.TaskID] = tk
	}
	var names []string
	for _, r := range out.Retried {
		o.hist.AddRetry(RetryRecord{Tenant: r.TenantID, PlanID: p.PlanID, TaskID: r.TaskID, Sent: rec.Sent,
			Acked: ans.Got, MinAttempt: seen[r.TaskID].Attempt + 1, Via: ans.Via})
		names = append(names, r.TenantID)
	}
	for _, s := range out.Skipped {
		names = append(names, fmt.Sprintf("%s skipped (%s)", s.TenantID, s.Reason))
		if o.skipped[s.TaskID]++; o.skipped[s.TaskID] == retrySkips {
			o.hist.Notef("recovery: plan retry skipped %s (task %s) %d times: %s; given up", s.TenantID, s.TaskID, retrySkips, s.Reason)
		}
	}
	sort.Strings(names)
	rec.Detail = strings.Join(names, ", ")
	o.hist.AddCommand(rec)
}

func (o *Operator) tenantResume(ctx context.Context, tk wireTask) {
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	rec := CommandRecord{Kind: "tenant-resume", Tenant: tk.TenantID, PlanID: tk.PlanID, TaskID: tk.TaskID, Sent: time.Now()}
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
