package main_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/executor-dev/executor/wire"
)

// targetCall is one stage call the fenceTarget received.
type targetCall struct {
	ID     int
	Tenant string
	Stage  string
	Run    int    // the run that made the call (the task's attempt, from the URL's run={{.Attempt}})
	Key    string // its Idempotency-Key header
	Fence  string // its Executor-Fence header
	Start  time.Time
	// End is when the target answered, or saw the caller hang up (close the connection);
	// zero while the call is in flight.
	End    time.Time
	Status int // what the target answered; 0: the caller hung up first
	// Completed: the target answered 2xx to a caller still there, and the answer was written:
	// from the target's side, the stage ran.
	Completed bool
	// Previous is the "previous" value of the call's JSON body, if any (rbTarget: what an
	// undo restores).
	Previous string
}

func (c targetCall) String() string {
	end := "in flight"
	if !c.End.IsZero() {
		end = c.End.Format("15:04:05.000")
	}
	how := "hung up by the caller"
	if c.Status != 0 {
		how = fmt.Sprintf("answered %d", c.Status)
	}
	return fmt.Sprintf("#%d %s/%s run %d [%s → %s] %s, key %q fence %q", c.ID, c.Tenant, c.Stage, c.Run,
		c.Start.Format("15:04:05.000"), end, how, c.Key, c.Fence)
}

// over reports whether the call ended by t (a call in flight has not).
func (c targetCall) over(t time.Time) bool { return !c.End.IsZero() && !c.End.After(t) }

// fenceTarget is a recording deployment target: it answers POST /<tenant>/<stage>?ms=N&run=R
// with 200 after N ms (a call with &hold=1 is then held further until release), and records
// every call: who (tenant, stage, run, Idempotency-Key, Executor-Fence), when it started and
// when it ended. A call ends when the target answers it (recorded before the answer leaves,
// so the caller's next call can never look as if it overlapped it) or when the caller hangs
// up: a call cut by its caller stops counting as in flight the moment the connection closes.
type fenceTarget struct {
	srv     *httptest.Server
	held    chan struct{} // closed by release
	release func()
	callBook
}

// callBook records the calls a target receives: each from its arrival (begin) to its end
// (end, or answer), safe for concurrent use.
type callBook struct {
	mu    sync.Mutex
	calls []targetCall
}

func (b *callBook) begin(c targetCall) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	c.ID = len(b.calls)
	b.calls = append(b.calls, c)
	return c.ID
}

func (b *callBook) end(id, status int, completed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := &b.calls[id]
	c.End, c.Status, c.Completed = time.Now(), status, completed
}

// all returns a copy of every call so far, in arrival order.
func (b *callBook) all() []targetCall {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]targetCall(nil), b.calls...)
}

// answer answers call id (of request r) with status and a JSON body. The call is recorded as
// ended before the answer leaves, so the caller's next call never looks as if it overlapped
// it; completed when it is a 200 to a caller still there whose answer was written.
func (b *callBook) answer(w http.ResponseWriter, r *http.Request, id, status int, body string) {
	b.end(id, status, status == http.StatusOK && r.Context().Err() == nil)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err := io.WriteString(w, body)
	if err == nil {
		err = http.NewResponseController(w).Flush()
	}
	if err != nil {
		b.mu.Lock()
		b.calls[id].Completed = false
		b.mu.Unlock()
	}
}

func newFenceTarget(t *testing.T) *fenceTarget {
	t.Helper()
	ft := &fenceTarget{held: make(chan struct{})}
	ft.release = sync.OnceFunc(func() { close(ft.held) })
	ft.srv = httptest.NewServer(http.HandlerFunc(ft.serve))
	t.Cleanup(ft.srv.Close)
	t.Cleanup(ft.release) // runs before the server closes: no handler is left holding
	return ft
}

// stages returns http stages calling the target, each answered after ms; the stages named in
// hold are held until release.
func (ft *fenceTarget) stages(ms int, names []string, hold ...string) []wire.StageRequest {
	out := httpStages(ft.srv.URL, "60s", names...)
	for i, name := range names {
		u := fmt.Sprintf("%s/{{.TenantID}}/%s?ms=%d&run={{.Attempt}}", ft.srv.URL, name, ms)
		for _, h := range hold {
			if h == name {
				u += "&hold=1"
			}
		}
		out[i].Params["url"] = u
	}
	return out
}

func (ft *fenceTarget) serve(w http.ResponseWriter, r *http.Request) {
	// Read the body to its end: only then does the server watch the connection and end the
	// request's context when the caller hangs up.
	_, _ = io.Copy(io.Discard, r.Body)
	tenant, stageName, _ := strings.Cut(strings.Trim(r.URL.Path, "/"), "/")
	q := r.URL.Query()
	ms, _ := strconv.Atoi(q.Get("ms"))
	run, _ := strconv.Atoi(q.Get("run"))
	id := ft.begin(targetCall{Tenant: tenant, Stage: stageName, Run: run,
		Key: r.Header.Get("Idempotency-Key"), Fence: r.Header.Get("Executor-Fence"), Start: time.Now()})

	timer := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-r.Context().Done():
		ft.end(id, 0, false)
		return
	}
	if q.Get("hold") == "1" {
		select {
		case <-ft.held:
		case <-r.Context().Done():
			ft.end(id, 0, false)
			return
		}
	}
	ft.answer(w, r, id, http.StatusOK, `{"ok":true}`)
}

// inFlight returns the tenants with a call of stage by run in flight.
func (ft *fenceTarget) inFlight(stageName string, run int) map[string]bool {
	out := map[string]bool{}
	for _, c := range ft.all() {
		if c.Stage == stageName && c.Run == run && c.End.IsZero() {
			out[c.Tenant] = true
		}
	}
	return out
}

// byTenant groups calls by tenant, each tenant's in arrival order.
func byTenant(calls []targetCall) map[string][]targetCall {
	out := map[string][]targetCall{}
	for _, c := range calls {
		out[c.Tenant] = append(out[c.Tenant], c)
	}
	return out
}

// overlaps returns, per tenant, the pairs of its calls (any stages) that were in flight at
// once: [Start, End) intervals that intersect, a call still in flight counting as open-ended.
func overlaps(calls []targetCall) map[string][]string {
	out := map[string][]string{}
	for tenant, cs := range byTenant(calls) {
		for i, a := range cs {
			for _, b := range cs[i+1:] { // b started at or after a (arrival order)
				if !a.over(b.Start) {
					out[tenant] = append(out[tenant], fmt.Sprintf("%s\n    overlaps %s", a, b))
				}
			}
		}
	}
	return out
}

// reruns returns the completed stages called again: for each (tenant, stage), every call that
// started after the stage's first completed call had ended, except a call with that call's
// Idempotency-Key, allowed once per in_doubt attempt of the stage in the tenant's ledger
// (inDoubt, keyed "tenant/stage": the retry of an attempt whose outcome no run saw sends the
// same key, so a target that honours it does the work once).
func reruns(calls []targetCall, inDoubt map[string]int) []string {
	type key struct{ tenant, stage string }
	groups := map[key][]targetCall{}
	for _, c := range calls {
		k := key{c.Tenant, c.Stage}
		groups[k] = append(groups[k], c)
	}
	var out []string
	for k, cs := range groups {
		var first *targetCall
		for i := range cs {
			if cs[i].Completed && (first == nil || cs[i].End.Before(first.End)) {
				first = &cs[i]
			}
		}
		if first == nil {
			continue
		}
		allowed := inDoubt[k.tenant+"/"+k.stage]
		for _, c := range cs {
			if c.ID == first.ID || c.Start.Before(first.End) {
				continue
			}
			if c.Key == first.Key && allowed > 0 {
				allowed--
				continue
			}
			out = append(out, fmt.Sprintf("%s/%s completed by %s\n    run again by %s", k.tenant, k.stage, *first, c))
		}
	}
	sort.Strings(out)
	return out
}

// inDoubtKeyFaults returns the retries of an in_doubt attempt that did not send its
// Idempotency-Key: for each in_doubt attempt (tenant, stage, run) whose call reached the
// target, the stage's first call by a later run must carry the same key.
func inDoubtKeyFaults(calls []targetCall, tasks []wire.Task) []string {
	var out []string
	for _, tk := range tasks {
		for _, a := range tk.Attempts {
			if a.Outcome != "in_doubt" {
				continue
			}
			var doubted, retry *targetCall
			for i, c := range calls {
				switch {
				case c.Tenant != tk.TenantID || c.Stage != a.Stage:
				case c.Run == a.Run && doubted == nil:
					doubted = &calls[i]
				case c.Run > a.Run && retry == nil:
					retry = &calls[i]
				}
			}
			if doubted != nil && retry != nil && retry.Key != doubted.Key {
				out = append(out, fmt.Sprintf("%s/%s in doubt in run %d: %s\n    retried with another key: %s",
					tk.TenantID, a.Stage, a.Run, *doubted, *retry))
			}
		}
	}
	sort.Strings(out)
	return out
}

// fenceFaults returns the calls without a fencing token for their tenant
// ("Executor-Fence: <tenantId>:<epoch>", epoch ≥ 1), and those whose epoch is lower than one
// an earlier call of the tenant carried: a stale run a target checking the token would
// refuse, and that should never have called.
func fenceFaults(calls []targetCall) []string {
	var out []string
	for tenant, cs := range byTenant(calls) {
		var highest uint64
		for _, c := range cs {
			prefix, epochText, ok := strings.Cut(c.Fence, ":")
			epoch, err := strconv.ParseUint(epochText, 10, 64)
			switch {
			case !ok || prefix != tenant || err != nil || epoch == 0:
				out = append(out, "no fencing token: "+c.String())
			case epoch < highest:
				out = append(out, fmt.Sprintf("stale epoch %d after %d: %s", epoch, highest, c))
			default:
				highest = epoch
			}
		}
	}
	sort.Strings(out)
	return out
}

// firstLines returns at most n of lines, and how many more there were.
func firstLines(lines []string, n int) string {
	if len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n... and %d more", len(lines)-n)
}
