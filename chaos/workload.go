//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"time"
)

// Workload submits plans continuously to random executors and cancels running tenants now
// and then, recording every submission and command in the history. Tenants come from a pool
// of names reused once their task ended (as the workload last saw it), or are new.
type Workload struct {
	c    *Cluster
	api  *API
	tg   *Target
	hist *History
	rng  *Rand
	cfg  Config

	mu    sync.Mutex
	plans map[string]*PlanState
	free  []string // pool tenants free for a new plan
	seq   int      // submissions
	fresh int      // new tenant names given

	cancel   context.CancelFunc
	wg       sync.WaitGroup
	stopOnce sync.Once
}

// PlanState is what the workload last saw of a plan.
type PlanState struct {
	ID       string
	Tenants  []string
	Status   string
	Reason   string
	Tasks    map[string]wireTask // by task id
	Finished bool                // the plan ended and every task of it too
	// FinishedAt is when the workload first saw it Finished.
	FinishedAt time.Time
}

// NewWorkload returns a workload against c whose stages call tg.
func NewWorkload(c *Cluster, api *API, tg *Target, hist *History, rng *Rand, cfg Config) *Workload {
	w := &Workload{c: c, api: api, tg: tg, hist: hist, rng: rng, cfg: cfg, plans: map[string]*PlanState{}}
	for i := range cfg.TenantPool {
		w.free = append(w.free, fmt.Sprintf("t%02d", i))
	}
	return w
}

// Start starts the submitter, the poller and the canceller.
func (w *Workload) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	for _, loop := range []func(context.Context){w.submitter, w.poller, w.canceller} {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			loop(ctx)
		}()
	}
}

// Stop stops the workload and waits for its goroutines (a request under way is abandoned).
// Stopping it again does nothing.
func (w *Workload) Stop() {
	w.stopOnce.Do(func() {
		if w.cancel != nil {
			w.cancel()
		}
		w.wg.Wait()
	})
}

// Plans returns a copy of what the workload knows of every plan it submitted.
func (w *Workload) Plans() []PlanState {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]PlanState, 0, len(w.plans))
	for _, p := range w.plans {
		cp := *p
		cp.Tasks = make(map[string]wireTask, len(p.Tasks))
		for k, v := range p.Tasks {
			cp.Tasks[k] = v
		}
		out = append(out, cp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (w *Workload) pick() *Executor { return w.c.Pick(w.rng) }

func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// running counts the plans that have not ended and are not PAUSED.
func (w *Workload) running() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, p := range w.plans {
		if !terminal(p.Status) && p.Status != statusPaused {
			n++
		}
	}
	return n
}

func (w *Workload) submitter(ctx context.Context) {
	for sleepCtx(ctx, w.rng.Jitter(w.cfg.SubmitEvery)) {
		if w.running() >= w.cfg.MaxActivePlans {
			continue
		}
		w.submit(ctx)
	}
}

// takeTenants takes n tenants: pool names while some are free (about half of them), new
// names for the rest.
func (w *Workload) takeTenants(n int) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	fromPool := min(len(w.free), w.rng.Between(0, n))
	var out []string
	for range fromPool {
		i := w.rng.Intn(len(w.free))
		out = append(out, w.free[i])
		w.free = append(w.free[:i], w.free[i+1:]...)
	}
	for len(out) < n {
		w.fresh++
		out = append(out, fmt.Sprintf("n%04d", w.fresh))
	}
	return out
}

func (w *Workload) giveBack(tenants []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.free = append(w.free, tenants...)
}

// newPlan returns a plan for tenants: 3 or 4 http stages of 50–300 ms calling the target,
// retried on the target's 503s.
func (w *Workload) newPlan(name string, tenants []string) planRequest {
	p := planRequest{Name: name, MaxConcurrency: w.rng.Between(2, 5)}
	for i := range w.rng.Between(3, 4) {
		stage := fmt.Sprintf("s%d", i+1)
		p.Stages = append(p.Stages, stageRequest{Name: stage, Kind: "http", Timeout: "30s",
			Params: map[string]any{"method": "POST", "url": w.tg.StageURL(stage, i, w.rng.Between(50, 300)),
				"body": `{"tenant":"{{.TenantID}}"}`},
			Retry: &retryPolicy{MaxAttempts: 8, InitialBackoff: "100ms", MaxBackoff: "1s"}})
	}
	for _, t := range tenants {
		p.Tenants = append(p.Tenants, tenantRequest{ID: t})
	}
	return p
}

// submit sends one plan with an Idempotency-Key, trying again (the same key, maybe another
// executor) while the answer is none, 503 or 429, for at most 40 s.
func (w *Workload) submit(ctx context.Context) {
	w.mu.Lock()
	w.seq++
	seq := w.seq
	w.mu.Unlock()
	tenants := w.takeTenants(w.rng.Between(5, 8))
	key := fmt.Sprintf("chaos-%d-%d", w.cfg.Seed, seq)
	plan := w.newPlan(fmt.Sprintf("chaos-%d", seq), tenants)
	sctx, cancel := context.WithTimeout(ctx, 40*time.Second)
	defer cancel()
	rec := SubmissionRecord{Key: key, Tenants: tenants, Sent: time.Now()}
	ans, tries := w.api.Try(sctx, w.pick, http.MethodPost, "/v1/plans", plan, http.Header{"Idempotency-Key": {key}})
	rec.Tries, rec.Code, rec.Via = tries, ans.Code, ans.Via
	switch {
	case ans.OK():
		var p wirePlan
		if err := ans.Decode(&p); err != nil {
			rec.Detail = err.Error()
			break
		}
		rec.PlanID, rec.Acked = p.PlanID, ans.Got
		w.mu.Lock()
		w.plans[p.PlanID] = &PlanState{ID: p.PlanID, Tenants: tenants, Status: p.Status, Tasks: map[string]wireTask{}}
		w.mu.Unlock()
	case ans.Code == http.StatusConflict:
		// A tenant the workload saw ended is busy: an expected refusal (the view it read may
		// lag); the plan was not created, the tenants go back to the pool.
		rec.Detail = ans.Problem()
		w.giveBack(tenants)
	case ans.Code >= 400 && ans.Code < 500:
		rec.Detail = ans.Problem() // the suite's own mistake: the report shows it
		w.giveBack(tenants)
	default:
		// No decisive answer: the plan may exist (the final enumeration finds it); its
		// tenants are never reused.
		rec.Detail = "undecided: " + ans.Problem()
	}
	w.hist.AddSubmission(rec)
}

// poller reads every known plan that has not finished, with its tasks, through a random
// executor, about twice a second.
func (w *Workload) poller(ctx context.Context) {
	for sleepCtx(ctx, 500*time.Millisecond) {
		for _, id := range w.unfinished() {
			if ctx.Err() != nil {
				return
			}
			w.Refresh(ctx, id)
		}
	}
}

func (w *Workload) unfinished() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var ids []string
	for id, p := range w.plans {
		if !p.Finished {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// Refresh reads plan id and its tasks once (one try each) and updates what the workload
// knows; a plan that finished gives its tenants back to the pool (pool names only).
func (w *Workload) Refresh(ctx context.Context, id string) {
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	e := w.pick()
	pa := w.api.Do(rctx, e, http.MethodGet, "/v1/plans/"+id+"?include=taskIds", nil, nil)
	ta := w.api.Do(rctx, e, http.MethodGet, "/v1/plans/"+id+"/tasks", nil, nil)
	if !pa.OK() || !ta.OK() {
		return
	}
	var p wirePlan
	var tl wireTaskList
	if pa.Decode(&p) != nil || ta.Decode(&tl) != nil {
		return
	}
	w.Observe(e.Name, p, tl.Tasks)
}

// Observe records a plan and its tasks as read through executor via.
func (w *Workload) Observe(via string, p wirePlan, tasks []wireTask) {
	w.mu.Lock()
	defer w.mu.Unlock()
	st, ok := w.plans[p.PlanID]
	if !ok {
		st = &PlanState{ID: p.PlanID, Tasks: map[string]wireTask{}}
		w.plans[p.PlanID] = st
	}
	if st.Finished {
		return
	}
	st.Status, st.Reason = p.Status, p.Reason
	allEnded := len(tasks) > 0
	for _, tk := range tasks {
		st.Tasks[tk.TaskID] = tk
		allEnded = allEnded && terminal(tk.Status)
	}
	if terminal(p.Status) && allEnded {
		st.Finished, st.FinishedAt = true, time.Now()
		byStatus := map[string]int{}
		for _, tk := range tasks {
			byStatus[tk.Status]++
		}
		w.hist.Notef("plan %s seen ended through %s: %s, %d tasks (%s), of %d task ids; tenants %v back to the pool",
			p.PlanID, via, p.Status, len(tasks), counts(byStatus), len(p.TaskIDs), poolNames(st.Tenants))
		for _, t := range st.Tenants {
			if isPoolName(t) {
				w.free = append(w.free, t)
			}
		}
	}
}

func poolNames(tenants []string) []string {
	var out []string
	for _, t := range tenants {
		if isPoolName(t) {
			out = append(out, t)
		}
	}
	return out
}

// isPoolName tells pool names (t00) from new ones (n0001).
func isPoolName(t string) bool { return len(t) > 0 && t[0] == 't' }

func (w *Workload) canceller(ctx context.Context) {
	for sleepCtx(ctx, w.rng.Jitter(w.cfg.CancelEvery)) {
		tk, ok := w.randomRunning()
		if !ok {
			continue
		}
		w.cancelTenant(ctx, tk)
	}
}

// RunningOn counts the tasks the workload last saw RUNNING, by the executor running them.
func (w *Workload) RunningOn() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for _, p := range w.plans {
		for _, tk := range p.Tasks {
			if tk.Status == statusRunning && tk.Executor != "" {
				out[tk.Executor]++
			}
		}
	}
	return out
}

func (w *Workload) randomRunning() (wireTask, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var running []wireTask
	for _, p := range w.plans {
		for _, tk := range p.Tasks {
			if tk.Status == statusRunning {
				running = append(running, tk)
			}
		}
	}
	if len(running) == 0 {
		return wireTask{}, false
	}
	sort.Slice(running, func(i, j int) bool { return running[i].TaskID < running[j].TaskID })
	return running[w.rng.Intn(len(running))], true
}

// cancelTenant sends POST /v1/tenants/{t}/cancel (trying again while there is no answer,
// or 503) and records the command; only a 2xx answer acknowledges it.
func (w *Workload) cancelTenant(ctx context.Context, tk wireTask) {
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	rec := CommandRecord{Kind: "cancel", Tenant: tk.TenantID, PlanID: tk.PlanID, TaskID: tk.TaskID, Sent: time.Now()}
	ans, tries := w.api.Try(cctx, w.pick, http.MethodPost, "/v1/tenants/"+url.PathEscape(tk.TenantID)+"/cancel", nil, nil)
	rec.Tries, rec.Code, rec.Via, rec.Answered = tries, ans.Code, ans.Via, ans.Got
	if ans.OK() {
		var got wireTask
		if err := ans.Decode(&got); err != nil {
			rec.Detail = err.Error()
		} else {
			rec.Acked, rec.TaskID, rec.PlanID, rec.Status = true, got.TaskID, got.PlanID, got.Status
		}
	} else {
		rec.Detail = ans.Problem()
	}
	w.hist.AddCommand(rec)
}
