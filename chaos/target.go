//go:build chaos

package chaos

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
)

// Call is one stage call the target received: which (plan, task, tenant, stage, run) it
// was, when it started and when the target answered, and how.
type Call struct {
	ID         int    `json:"id"`
	Plan       string `json:"plan"`
	Task       string `json:"task"`
	Tenant     string `json:"tenant"`
	Stage      string `json:"stage"`
	StageIndex int    `json:"stageIndex"`
	Run        int    `json:"run"` // the task's attempt (run number)
	Key        string `json:"key"` // the Idempotency-Key: plan/task/stage/run (the same on every attempt of a run; an in-doubt attempt's again on its retry)
	// Fence is the Executor-Fence header as received ("<tenantId>:<epoch>"); Epoch is its
	// epoch, 0 when the header is missing or malformed (FenceOK false).
	Fence   string    `json:"fence"`
	Epoch   uint64    `json:"epoch"`
	FenceOK bool      `json:"fenceOk"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`    // the target answered, or saw the caller go away
	Status  int       `json:"status"` // what the target answered; 0: the caller went away first
	// Completed: the target answered 2xx to a caller still waiting, and the answer was
	// written: from the target's side, the stage ran.
	Completed bool `json:"completed"`
}

// String names the call for evidence lines.
func (c Call) String() string {
	return fmt.Sprintf("call#%d %s/%s stage %s run %d epoch %d key …/%s [%s → %s] status %d completed %t",
		c.ID, c.Tenant, shortID(c.Task), c.Stage, c.Run, c.Epoch, keyTail(c.Key), c.Start.Format("15:04:05.000"), c.End.Format("15:04:05.000"), c.Status, c.Completed)
}

// keyTail is an Idempotency-Key's stage/run (its plan and task are the call's own).
func keyTail(key string) string {
	parts := strings.Split(key, "/")
	if len(parts) < 2 {
		return key
	}
	return strings.Join(parts[len(parts)-2:], "/")
}

// parseFence reads an Executor-Fence header, "<tenantId>:<epoch>", of a call of tenant: its
// epoch, and whether the header is well formed and names that tenant.
func parseFence(header, tenant string) (uint64, bool) {
	t, e, found := strings.Cut(header, ":")
	if !found {
		return 0, false
	}
	epoch, err := strconv.ParseUint(e, 10, 64)
	if err != nil || epoch == 0 {
		return 0, false
	}
	return epoch, t == tenant
}

// Overlap is two calls of one tenant in flight at once.
type Overlap struct {
	Tenant        string `json:"tenant"`
	First, Second Call   `json:"-"`
	FirstID       int    `json:"first"`
	SecondID      int    `json:"second"`
}

// Target is the deployment target every stage calls: an httptest server answering
// /call/<plan>/<task>/<tenant>/<stage>?ms=N&i=<stage index>&run=<attempt> after N ms with 200
// (or, for a FailRate share of calls, 503: a transient failure the stage retries). It records
// every call, with its Idempotency-Key and Executor-Fence headers (it refuses no caller: the
// checks judge them afterwards), and tracks the calls in flight per tenant: a call is in flight from its arrival
// until the target answers it (the answer is recorded before it is written, so that the
// caller's next call can never be seen as overlapping it) or sees its caller go away.
type Target struct {
	srv      *httptest.Server
	rng      *Rand
	failRate float64

	mu          sync.Mutex
	calls       []Call
	inflight    map[string][]int // tenant → ids of its calls in flight
	maxInFlight int
	maxTenant   string
	overlaps    []Overlap
}

// StartTarget starts the target; it is closed when the test ends.
func StartTarget(t *testing.T, rng *Rand, failRate float64) *Target {
	t.Helper()
	tg := &Target{rng: rng, failRate: failRate, inflight: map[string][]int{}}
	tg.srv = httptest.NewServer(http.HandlerFunc(tg.serve))
	t.Cleanup(tg.srv.Close)
	return tg
}

// URL is the target's base URL.
func (tg *Target) URL() string { return tg.srv.URL }

// StageURL is the templated URL of stage name (index i) answering after ms.
func (tg *Target) StageURL(name string, i, ms int) string {
	return fmt.Sprintf("%s/call/{{.PlanID}}/{{.TaskID}}/{{.TenantID}}/%s?ms=%d&i=%d&run={{.Attempt}}", tg.srv.URL, name, ms, i)
}

func (tg *Target) serve(w http.ResponseWriter, r *http.Request) {
	// Read the body to its end: only then does the server watch the connection and end the
	// request's context when the caller goes away.
	_, _ = io.Copy(io.Discard, r.Body)
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) != 5 || parts[0] != "call" {
		http.Error(w, "unknown path", http.StatusNotFound)
		return
	}
	q := r.URL.Query()
	ms, _ := strconv.Atoi(q.Get("ms"))
	idx, _ := strconv.Atoi(q.Get("i"))
	run, _ := strconv.Atoi(q.Get("run"))
	fence := r.Header.Get("Executor-Fence")
	epoch, fenceOK := parseFence(fence, parts[3])
	id := tg.begin(Call{Plan: parts[1], Task: parts[2], Tenant: parts[3], Stage: parts[4], StageIndex: idx,
		Run: run, Key: r.Header.Get("Idempotency-Key"), Fence: fence, Epoch: epoch, FenceOK: fenceOK, Start: time.Now()})

	timer := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-r.Context().Done():
		tg.end(id, 0, false)
		return
	}
	status := http.StatusOK
	if tg.failRate > 0 && tg.rng.Float64() < tg.failRate {
		status = http.StatusServiceUnavailable
	}
	// Recorded as answered before the answer leaves: the caller cannot start its next call
	// before it has read this one's answer.
	tg.end(id, status, r.Context().Err() == nil && status < 300)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err := io.WriteString(w, `{"ok":true}`)
	if err == nil {
		err = http.NewResponseController(w).Flush()
	}
	if err != nil {
		tg.mu.Lock()
		tg.calls[id].Completed = false
		tg.mu.Unlock()
	}
}

func (tg *Target) begin(c Call) int {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	c.ID = len(tg.calls)
	tg.calls = append(tg.calls, c)
	for _, other := range tg.inflight[c.Tenant] {
		tg.overlaps = append(tg.overlaps, Overlap{Tenant: c.Tenant, FirstID: other, SecondID: c.ID})
	}
	tg.inflight[c.Tenant] = append(tg.inflight[c.Tenant], c.ID)
	if n := len(tg.inflight[c.Tenant]); n > tg.maxInFlight {
		tg.maxInFlight, tg.maxTenant = n, c.Tenant
	}
	return c.ID
}

func (tg *Target) end(id, status int, completed bool) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	c := &tg.calls[id]
	c.End, c.Status, c.Completed = time.Now(), status, completed
	ids := tg.inflight[c.Tenant]
	for i, other := range ids {
		if other == id {
			tg.inflight[c.Tenant] = append(ids[:i:i], ids[i+1:]...)
			break
		}
	}
	if len(tg.inflight[c.Tenant]) == 0 {
		delete(tg.inflight, c.Tenant)
	}
}

// Calls returns a copy of every call so far, in arrival order (a call still in flight has a
// zero End).
func (tg *Target) Calls() []Call {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return append([]Call(nil), tg.calls...)
}

// InFlight returns how many calls are in flight now.
func (tg *Target) InFlight() int {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	n := 0
	for _, ids := range tg.inflight {
		n += len(ids)
	}
	return n
}

// MaxInFlightPerTenant returns the most calls of one tenant ever in flight at once, and a
// tenant that had them.
func (tg *Target) MaxInFlightPerTenant() (int, string) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return tg.maxInFlight, tg.maxTenant
}

// Overlaps returns every pair of calls of one tenant that were in flight at once.
func (tg *Target) Overlaps() []Overlap {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	out := make([]Overlap, len(tg.overlaps))
	for i, o := range tg.overlaps {
		o.First, o.Second = tg.calls[o.FirstID], tg.calls[o.SecondID]
		out[i] = o
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SecondID < out[j].SecondID })
	return out
}

// shortID shortens a ULID for evidence lines (its random tail tells tasks apart).
func shortID(id string) string {
	if len(id) > 8 {
		return id[len(id)-8:]
	}
	return id
}
