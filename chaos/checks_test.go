//go:build chaos

package chaos

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The checks must see what they are for: each is fed a history with one violation, and one
// without.

var t0 = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

func call(id int, task, stage string, start, end float64, completed bool) Call {
	status := 0
	if completed {
		status = http.StatusOK
	}
	return Call{ID: id, Plan: "P", Task: task, Tenant: "tenant-" + task, Stage: stage, Run: 1,
		Key: "P/" + task + "/" + stage + "/1", Fence: "tenant-" + task + ":1", Epoch: 1, FenceOK: true,
		Start: at(start), End: at(end), Status: status, Completed: completed}
}

// byRun is c made by run run (fence epoch epoch), sending the key of run keyRun.
func byRun(c Call, run, keyRun int, epoch uint64) Call {
	c.Run, c.Epoch = run, epoch
	c.Key = fmt.Sprintf("P/%s/%s/%d", c.Task, c.Stage, keyRun)
	c.Fence = fmt.Sprintf("%s:%d", c.Tenant, epoch)
	return c
}

// endedSnapshot is a final state in which every task listed ended as given, the same
// through the API and in Redis.
func endedSnapshot(statuses map[string]string) *Snapshot {
	s := &Snapshot{Plans: map[string]*PlanView{"P": {PlanID: "P", Redis: statusCompleted,
		API: map[string]string{"exec-a": statusCompleted}}}, Tasks: map[string]*TaskView{}}
	for id, st := range statuses {
		s.Tasks[id] = &TaskView{TaskID: id, TenantID: "tenant-" + id, PlanID: "P", Redis: st, RedisAttempt: 1, Attempt: 1,
			List: map[string]string{"exec-a": st}, Get: map[string]string{"exec-a": st}}
		s.Plans["P"].TaskIDs = append(s.Plans["P"].TaskIDs, id)
	}
	return s
}

func TestChecksReRuns(t *testing.T) {
	calls := []Call{
		call(0, "A", "s1", 0, 1, true),
		call(1, "A", "s1", 5, 6, true), // A's completed s1 again: no retry in between
		call(2, "B", "s1", 0, 1, false),
		call(3, "B", "s1", 2, 3, true), // B's s1 had not completed: allowed
		// C's run 1 completed s1 at the target but was lost before it recorded it (in doubt):
		// run 2, after an operator retry, calls s1 with run 1's key (a 503 first, then 200),
		// then s2 with its own: allowed.
		call(4, "C", "s1", 0, 1, true),
		byRun(call(5, "C", "s1", 5, 5.2, false), 2, 1, 3),
		byRun(call(6, "C", "s1", 5.5, 6, true), 2, 1, 3),
		byRun(call(7, "C", "s2", 6, 7, true), 2, 2, 3),
		// D's run 2, after a retry, calls its completed s1 again under its own key: the
		// checkpoint was lost, a violation even after the retry.
		call(8, "D", "s1", 0, 1, true),
		byRun(call(9, "D", "s1", 5, 6, true), 2, 2, 3),
		// E's run 2, after a retry, calls two completed stages with run 1's keys: one at most
		// is in doubt per interrupted run.
		call(10, "E", "s1", 0, 1, true),
		call(11, "E", "s2", 1, 2, true),
		byRun(call(12, "E", "s1", 5, 6, true), 2, 1, 3),
		byRun(call(13, "E", "s2", 6, 7, true), 2, 1, 3),
		// F's run 2 calls its in-doubt stage with run 1's key, but no retry was sent.
		call(14, "F", "s1", 0, 1, true),
		byRun(call(15, "F", "s1", 5, 6, true), 2, 1, 3),
		// G: a retry whose answer never came (undecided) counts as an operator retry.
		call(16, "G", "s1", 0, 1, true),
		byRun(call(17, "G", "s1", 5, 6, true), 2, 1, 3),
	}
	h := NewHistory()
	for _, task := range []string{"C", "D", "E"} {
		h.AddRetry(RetryRecord{Tenant: "tenant-" + task, TaskID: task, Sent: at(3), Acked: at(3.1), MinAttempt: 2})
	}
	h.AddRetry(RetryRecord{Tenant: "tenant-G", TaskID: "G", Sent: at(3), MinAttempt: 2, Undecided: true})
	snap := endedSnapshot(map[string]string{"A": statusCompleted, "B": statusCompleted, "C": statusCompleted,
		"D": statusCompleted, "E": statusCompleted, "F": statusCompleted, "G": statusCompleted})
	for _, task := range []string{"C", "D", "E", "F", "G"} {
		snap.Tasks[task].Attempt, snap.Tasks[task].RedisAttempt = 2, 2
	}

	r := Check(Evidence{History: h, Calls: calls, Snapshot: snap, Grace: time.Second})
	require.Len(t, r.ReRuns, 4, "%v", r.ReRuns)
	assert.Contains(t, r.ReRuns[0], "tenant-A re-run by run 1, not by a later run")
	assert.Contains(t, r.ReRuns[1], "tenant-D re-run under a new key (after a retry)")
	assert.Contains(t, r.ReRuns[2], "tenant-E run 2 re-ran 2 completed stages")
	assert.Contains(t, r.ReRuns[3], "tenant-F re-run without a retry")
	assert.Equal(t, 4, r.ReRunsRetried, "C's s1 (its two calls: one re-run), E's s1 and s2, G's s1")
	assert.Equal(t, 3, r.RetriesHonoured)
	assert.Equal(t, 1, r.RetriesUndecided)
	assert.Empty(t, r.RetryViolations)
	assert.Empty(t, r.StaleCalls)
	assert.Empty(t, r.FenceMissing)
	assert.Empty(t, r.Stranded)
	assert.Empty(t, r.Mismatches)
}

// A call whose fence epoch is lower than one the target already answered for the same task is
// a stale caller served; one that only overlapped the newer call (check 1's), or came before
// it, is not; a call without a valid Executor-Fence is reported.
func TestChecksFences(t *testing.T) {
	calls := []Call{
		call(0, "A", "s1", 0, 1, true),
		byRun(call(1, "A", "s1", 5, 5.5, true), 2, 1, 3), // the retry's run, epoch 3
		call(2, "A", "s2", 6, 6.5, true),                 // run 1 (epoch 1) calls again: stale
		byRun(call(3, "A", "s2", 7, 7.5, true), 2, 2, 3),
		call(4, "B", "s1", 0, 1, true),
		byRun(call(5, "B", "s2", 2, 3, false), 2, 2, 4), // epoch 4: the caller hung up (not answered)
		call(6, "B", "s3", 2.5, 2.8, true),              // epoch 1 while it was in flight: check 1's, not stale
		call(7, "C", "s1", 0, 1, true),
	}
	calls[7].Fence, calls[7].Epoch, calls[7].FenceOK = "tenant-X:1", 1, false // names another tenant

	r := Check(Evidence{History: NewHistory(), Calls: calls, Snapshot: endedSnapshot(map[string]string{
		"A": statusCompleted, "B": statusCompleted, "C": statusCompleted})})
	require.Len(t, r.StaleCalls, 1, "%v", r.StaleCalls)
	assert.Contains(t, r.StaleCalls[0], "tenant-A: stale caller served: epoch 1 after the target answered epoch 3")
	assert.Contains(t, r.StaleCalls[0], "call#2 ")
	require.Len(t, r.FenceMissing, 1, "%v", r.FenceMissing)
	assert.Contains(t, r.FenceMissing[0], "tenant-X:1")
}

// A task reaped INTERRUPTED whose run last beat within a conn-latency window (or a heartbeat
// period before it) is a false INTERRUPTED; one whose run beat last before that, while the
// previous fault's lost runs may still have been beating, or after the window, is not
// counted against it.
func TestChecksLatency(t *testing.T) {
	h := NewHistory()
	h.AddFault(FaultRecord{Kind: FaultConnCut, Target: "exec-a", Start: at(0), End: at(6)})
	h.AddFault(FaultRecord{Kind: FaultConnLatency, Target: "exec-b", Start: at(13), End: at(25)})
	h.AddFault(FaultRecord{Kind: FaultExecKill, Target: "exec-b", Start: at(29), End: at(33)})
	reap := func(task string, beat, reaped float64) Reap {
		return Reap{At: at(reaped), By: "exec-c", TaskID: task, PlanID: "P", Tenant: "tenant-" + task, HeartbeatAt: at(beat)}
	}
	reaps := []Reap{
		reap("CUT", 5.5, 9.5),          // lost to the cut: beat last before its end + 2 TTLs
		reap("SLOW", 20, 23.7),         // beat within the latency and never again: false
		reap("JUSTBEFORE", 12.5, 16.2), // beat a heartbeat period before it began: false
		reap("KILLED", 28.9, 32.6),     // lost to the kill after the latency
	}
	r := Check(Evidence{History: h, Reaps: reaps, LeaseTTL: 3 * time.Second, Snapshot: endedSnapshot(map[string]string{})})
	assert.Equal(t, 1, r.LatencyWindows)
	assert.Equal(t, 2, r.ReapedInLatency, "reaped while the latency was on: SLOW, JUSTBEFORE")
	assert.Equal(t, 4, r.Reaped)
	require.Len(t, r.LatencyInterrupts, 2, "%v", r.LatencyInterrupts)
	assert.Contains(t, r.LatencyInterrupts[0], "tenant-JUSTBEFORE")
	assert.Contains(t, r.LatencyInterrupts[1], "tenant-SLOW")

	// A latency begun right after a fault: the guard leaves its first seconds out.
	h2 := NewHistory()
	h2.AddFault(FaultRecord{Kind: FaultConnCut, Target: "exec-a", Start: at(0), End: at(6)})
	h2.AddFault(FaultRecord{Kind: FaultConnLatency, Target: "exec-b", Start: at(8), End: at(20)})
	r = Check(Evidence{History: h2, Reaps: []Reap{reap("CUT", 8.2, 11.9), reap("SLOW", 13, 16.7)},
		LeaseTTL: 3 * time.Second, Snapshot: endedSnapshot(map[string]string{})})
	require.Len(t, r.LatencyInterrupts, 1, "%v", r.LatencyInterrupts)
	assert.Contains(t, r.LatencyInterrupts[0], "tenant-SLOW")
}

func TestChecksCancels(t *testing.T) {
	h := NewHistory()
	cancel := func(task string, answered float64) {
		h.AddCommand(CommandRecord{Kind: "cancel", Tenant: "tenant-" + task, TaskID: task, Via: "exec-a",
			Sent: at(answered - 0.1), Answered: at(answered), Code: 200, Status: statusCancelled, Acked: true})
	}
	cancel("A", 10) // honoured: its call started before the answer
	cancel("B", 10) // a call of it starts after the answer and the grace
	cancel("C", 10) // ends COMPLETED
	// Refused: not checked.
	h.AddCommand(CommandRecord{Kind: "cancel", Tenant: "tenant-D", TaskID: "D", Code: 409})
	calls := []Call{
		call(0, "A", "s1", 9.5, 10.05, false),
		call(1, "B", "s2", 12, 12.2, true),
		call(2, "D", "s3", 30, 30.2, true),
	}
	snap := endedSnapshot(map[string]string{"A": statusCancelled, "B": statusCancelled, "C": statusCompleted, "D": statusCompleted})

	r := Check(Evidence{History: h, Calls: calls, Snapshot: snap, Grace: time.Second})
	assert.Equal(t, 3, r.CancelsAcked)
	assert.Equal(t, 1, r.CancelsHonoured)
	require.Len(t, r.CancelViolations, 2, "%v", r.CancelViolations)
	assert.Contains(t, r.CancelViolations[0], "called after")
	assert.Contains(t, r.CancelViolations[1], "ends COMPLETED")
}

// A cancel an operator's retry of the same task may have followed (the retry acknowledged
// after the cancel was sent, or undecided) is superseded: the task may run on and complete.
// One acknowledged before the cancel was sent does not excuse it.
func TestChecksCancelsSupersededByARetry(t *testing.T) {
	h := NewHistory()
	for _, task := range []string{"A", "B", "C"} {
		h.AddCommand(CommandRecord{Kind: "cancel", Tenant: "tenant-" + task, TaskID: task, Via: "exec-a",
			Sent: at(9), Answered: at(10), Code: 200, Status: statusCancelled, Acked: true})
	}
	h.AddRetry(RetryRecord{Tenant: "tenant-A", TaskID: "A", Sent: at(9.5), Acked: at(9.6), MinAttempt: 2}) // overlaps the cancel
	h.AddRetry(RetryRecord{Tenant: "tenant-B", TaskID: "B", Sent: at(8), MinAttempt: 2, Undecided: true})
	h.AddRetry(RetryRecord{Tenant: "tenant-C", TaskID: "C", Sent: at(5), Acked: at(6), MinAttempt: 2}) // before it
	calls := []Call{byRun(call(0, "A", "s1", 12, 12.2, true), 2, 2, 3), byRun(call(1, "C", "s1", 12, 12.2, true), 2, 2, 3)}
	snap := endedSnapshot(map[string]string{"A": statusCompleted, "B": statusCompleted, "C": statusCompleted})
	snap.Tasks["A"].Attempt, snap.Tasks["A"].RedisAttempt = 2, 2
	snap.Tasks["C"].Attempt, snap.Tasks["C"].RedisAttempt = 2, 2

	r := Check(Evidence{History: h, Calls: calls, Snapshot: snap, Grace: time.Second})
	assert.Equal(t, 3, r.CancelsAcked)
	assert.Equal(t, 2, r.CancelsSuperseded)
	require.Len(t, r.CancelViolations, 1, "%v", r.CancelViolations)
	assert.Contains(t, r.CancelViolations[0], "tenant-C")
}

func TestChecksStrandedAndViews(t *testing.T) {
	snap := endedSnapshot(map[string]string{"A": statusCompleted, "B": statusInterrupted, "C": statusCompleted})
	snap.Tasks["C"].Get["exec-b"] = statusRunning // exec-b's view lags Redis's
	snap.Plans["P"].API["exec-b"] = statusRunning
	// Q: in Redis, but no executor can read it; its task is gone.
	snap.Plans["Q"] = &PlanView{PlanID: "Q", Redis: statusCompleted, API: map[string]string{"exec-a": "HTTP 404 (task: not found)"}}
	snap.Tasks["D"] = &TaskView{TaskID: "D", PlanID: "Q", List: map[string]string{}, Get: map[string]string{"exec-a": "HTTP 404"}}

	r := Check(Evidence{History: NewHistory(), Snapshot: snap})
	require.Len(t, r.Stranded, 3, "%v", r.Stranded)
	assert.Contains(t, r.Stranded[0], "tenant-B")
	assert.Contains(t, r.Stranded[1], "tenant-C", "C reads RUNNING through exec-b: not ended there")
	assert.Contains(t, r.Stranded[2], "task D", "a task gone while its plan is not")
	require.Len(t, r.Mismatches, 3, "%v (D is absent everywhere: the views agree)", r.Mismatches)
	assert.Contains(t, r.Mismatches[0], "plan P: exec-b says RUNNING")
	assert.Contains(t, r.Mismatches[1], "plan Q: exec-a says HTTP 404")
	assert.Contains(t, r.Mismatches[2], "exec-b's GET /v1/tasks says RUNNING")
	require.Len(t, r.PlansOpen, 1, "the plan reads RUNNING through exec-b")
	assert.Equal(t, 1, r.TasksByStatus[statusInterrupted])
}

func TestChecksSubmissions(t *testing.T) {
	h := NewHistory()
	h.AddSubmission(SubmissionRecord{Key: "k1", PlanID: "P", Acked: at(1)})
	h.AddSubmission(SubmissionRecord{Key: "k2", PlanID: "GONE", Acked: at(1)})
	h.AddSubmission(SubmissionRecord{Key: "k3", PlanID: "ENDED", Acked: at(1)})
	h.AddSubmission(SubmissionRecord{Key: "k4", Code: 409})
	h.AddFault(FaultRecord{Kind: FaultRedisRestart, Start: at(20), End: at(21)})
	snap := endedSnapshot(map[string]string{})
	snap.Plans["GONE"] = &PlanView{PlanID: "GONE", API: map[string]string{"exec-a": "HTTP 404"}}
	snap.Plans["ENDED"] = &PlanView{PlanID: "ENDED", API: map[string]string{"exec-a": "HTTP 404"}}
	plans := []PlanState{{ID: "ENDED", Finished: true, FinishedAt: at(10)}, {ID: "GONE"}}
	h.AddCommand(CommandRecord{Kind: "cancel", Tenant: "x", PlanID: "ENDED", TaskID: "X", Answered: at(5), Code: 200, Acked: true})

	r := Check(Evidence{History: h, Snapshot: snap, Plans: plans})
	assert.Equal(t, 3, r.SubmissionsAcked)
	require.Len(t, r.LostPlans, 1, "%v", r.LostPlans)
	assert.Contains(t, r.LostPlans[0], "plan GONE")
	assert.Equal(t, []string{"ENDED"}, r.LostToDataLoss, "a plan that ended before Redis lost its data may be gone")
	assert.Equal(t, 1, r.CancelsLost, "a cancel of a task of that plan cannot be checked")
	assert.Empty(t, r.CancelViolations)
	assert.Empty(t, r.PlansOpen, "a plan gone is checked as lost or not at all")
	assert.Empty(t, r.Mismatches)
	assert.Equal(t, 2, r.PlansByStatus["GONE"])
}

// The target counts two calls of one tenant in flight at once, never two calls one after
// the other.
func TestTargetTracksInFlightPerTenant(t *testing.T) {
	tg := StartTarget(t, NewRand(1), 0)
	get := func(tenant, stage string, ms int) {
		resp, err := http.Get(fmt.Sprintf("%s/call/P/T-%s/%s/%s?ms=%d&i=0&run=1", tg.URL(), tenant, tenant, stage, ms))
		if assert.NoError(t, err) {
			resp.Body.Close()
		}
	}
	for _, s := range []string{"s1", "s2", "s3"} {
		get("serial", s, 10)
	}
	n, _ := tg.MaxInFlightPerTenant()
	assert.Equal(t, 1, n, "calls one after the other")
	assert.Empty(t, tg.Overlaps())

	var wg sync.WaitGroup
	for _, s := range []string{"s1", "s2"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			get("twice", s, 300)
		}()
	}
	wg.Wait()
	n, tenant := tg.MaxInFlightPerTenant()
	assert.Equal(t, 2, n)
	assert.Equal(t, "twice", tenant)
	require.Len(t, tg.Overlaps(), 1)
	assert.Equal(t, 5, len(tg.Calls()))
	for _, c := range tg.Calls() {
		assert.True(t, c.Completed, c.String())
	}
	assert.Zero(t, tg.InFlight())
}

// A plan submitted before an executor's kill -9 that Redis's data loss followed may be gone
// (the double fault, docs/degraded.md); one submitted after both may not.
func TestChecksSubmissionsLostToAKillThenADataLoss(t *testing.T) {
	h := NewHistory()
	h.AddSubmission(SubmissionRecord{Key: "k1", PlanID: "BEFORE", Sent: at(1), Acked: at(1)})
	h.AddSubmission(SubmissionRecord{Key: "k2", PlanID: "AFTER", Sent: at(30), Acked: at(30)})
	h.AddFault(FaultRecord{Kind: FaultExecKill, Target: "exec-a", Start: at(5), End: at(9)})
	h.AddFault(FaultRecord{Kind: FaultRedisRestart, Start: at(20), End: at(21)})
	snap := endedSnapshot(map[string]string{})
	for _, id := range []string{"BEFORE", "AFTER"} {
		snap.Plans[id] = &PlanView{PlanID: id, API: map[string]string{"exec-a": "HTTP 404"}}
	}

	r := Check(Evidence{History: h, Snapshot: snap, Plans: []PlanState{{ID: "BEFORE"}, {ID: "AFTER"}}})
	require.Len(t, r.LostPlans, 1, "%v", r.LostPlans)
	assert.Contains(t, r.LostPlans[0], "plan AFTER")
	assert.Equal(t, []string{"BEFORE"}, r.LostToDataLoss)
}

// The target records each call's Idempotency-Key and Executor-Fence (its epoch, and whether it
// names the call's tenant).
func TestTargetRecordsKeyAndFence(t *testing.T) {
	tg := StartTarget(t, NewRand(1), 0)
	send := func(fence string) {
		req, err := http.NewRequest(http.MethodPost, tg.URL()+"/call/P/T-a/a/s1?ms=1&i=0&run=2", nil)
		require.NoError(t, err)
		req.Header.Set("Idempotency-Key", "P/T-a/s1/1")
		if fence != "" {
			req.Header.Set("Executor-Fence", fence)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	send("a:7")
	send("b:7")
	send("a:x")
	send("")
	calls := tg.Calls()
	require.Len(t, calls, 4)
	assert.Equal(t, "P/T-a/s1/1", calls[0].Key)
	assert.Equal(t, 2, calls[0].Run)
	assert.Equal(t, uint64(7), calls[0].Epoch)
	assert.True(t, calls[0].FenceOK)
	for _, c := range calls[1:] {
		assert.False(t, c.FenceOK, "%q", c.Fence)
	}
}
