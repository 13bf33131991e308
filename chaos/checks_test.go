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
		Start: at(start), End: at(end), Status: status, Completed: completed}
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

func TestCheckReRuns(t *testing.T) {
	calls := []Call{
		call(0, "A", "s1", 0, 1, true),
		call(1, "A", "s1", 5, 6, true), // A's completed s1 again: no retry in between
		call(2, "B", "s1", 0, 1, false),
		call(3, "B", "s1", 2, 3, true), // B's s1 had not completed: allowed
		call(4, "C", "s1", 0, 1, true),
		call(5, "C", "s1", 5, 6, true), // after an operator retry: allowed
	}
	h := NewHistory()
	h.AddRetry(RetryRecord{Tenant: "tenant-C", TaskID: "C", Sent: at(3), Acked: at(3.1), MinAttempt: 2})
	snap := endedSnapshot(map[string]string{"A": statusCompleted, "B": statusCompleted, "C": statusCompleted})
	snap.Tasks["C"].Attempt, snap.Tasks["C"].RedisAttempt = 2, 2

	r := Check(Evidence{History: h, Calls: calls, Snapshot: snap, Grace: time.Second})
	require.Len(t, r.ReRuns, 1, "%v", r.ReRuns)
	assert.Contains(t, r.ReRuns[0], "tenant-A")
	assert.Equal(t, 1, r.ReRunsRetried)
	assert.Equal(t, 1, r.RetriesHonoured)
	assert.Empty(t, r.RetryViolations)
	assert.Empty(t, r.Stranded)
	assert.Empty(t, r.Mismatches)
}

func TestCheckCancels(t *testing.T) {
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

func TestCheckStrandedAndViews(t *testing.T) {
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

func TestCheckSubmissions(t *testing.T) {
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
func TestCheckSubmissionsLostToAKillThenADataLoss(t *testing.T) {
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
