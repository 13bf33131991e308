// Package repotest is the contract test suite of the plan, task and checkpoint repositories.
// Every implementation (infra/memrepo; infra/redisrepo on one node and on a Redis Cluster) runs
// the same suite:
//
//	func TestContract(t *testing.T) {
//		repotest.Run(t, func(t *testing.T) repotest.Store { ... })
//	}
//
// The suite only uses the domain interfaces, so it must never import an implementation.
package repotest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/audit"
	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// Creator stores a plan with its tasks as one step (app.Creator; repeated here so the suite
// does not depend on the application layer).
type Creator interface {
	CreatePlan(ctx context.Context, p *plan.Plan, tasks []*task.Task) error
}

// Store is one implementation's repositories, all backed by the same storage.
type Store struct {
	Creator     Creator
	Plans       plan.Repository
	Tasks       task.Repository
	Checkpoints checkpoint.Store
	Index       Index
	Transcripts Transcripts
	Audit       audit.Log
}

// Run runs the contract suite. newStore is called once per subtest, possibly from parallel
// subtests, and must return an empty store isolated from every other one it returned (for a
// shared server: a unique key prefix or database per call, cleaned up with t.Cleanup).
func Run(t *testing.T, newStore func(t *testing.T) Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s Store)
	}{
		{"Plan/CreateAndRead", testPlanCreateAndRead},
		{"Plan/NotFound", testPlanNotFound},
		{"Plan/Save", testPlanSave},
		{"Plan/Refresh", testPlanRefresh},
		{"Plan/StoreDoesNotShareAggregates", testPlanNotShared},
		{"Plan/IdempotencyKeyFirstPlanWins", testPlanIdempotencyKey},
		{"Plan/ListNewestFirst", testPlanList},
		{"Plan/ListPaging", testPlanListPaging},
		{"Task/CreateAndRead", testTaskCreateAndRead},
		{"Task/NotFound", testTaskNotFound},
		{"Task/LatestIsNewestTask", testTaskLatest},
		{"Task/LatestWithCheckpoint", testLatestWithCheckpoint},
		{"Task/Peek", testPeek},
		{"Task/ByIDs", testTaskByIDs},
		{"Task/Statuses", testTaskStatuses},
		{"Task/StoreDoesNotShareAggregates", testTaskNotShared},
		{"Task/SaveWithCheckpoint", testSaveWithCheckpoint},
		{"Task/SaveWithoutCheckpointKeepsIt", testSaveWithoutCheckpoint},
		{"Task/BumpFence", testBumpFence},
		{"Task/StaleSaveIsFenced", testStaleSaveFenced},
		{"Task/BusyTenantGetsNoNewTask", testBusyTenant},
		{"Task/Reactivate", testReactivate},
		{"Plan/CreatePlanWithTasks", testCreatePlan},
		{"Plan/RolloutControl", testPlanRolloutControl},
		{"Plan/RingAnalysis", testPlanRingAnalysis},
		{"Plan/Rings", testPlanRings},
		{"Task/WaitsAndIsDecided", testTaskWaitsAndIsDecided},
		{"Concurrency", testConcurrency},
		{"Task/SaveIsCompareAndSet", testTaskSaveIsCompareAndSet},
		{"Task/UpdateAppliesATransition", testTaskUpdate},
		{"Task/ConcurrentUpdatesLoseNothing", testTaskConcurrentUpdates},
		{"Task/ConcurrentRetriesOneWins", testConcurrentRetriesOneWins},
		{"Task/InterruptedAttemptIsKept", testInterruptedAttemptIsKept},
		{"Task/RollbackIsKept", testRollbackIsKept},
		{"Plan/SaveIsCompareAndSet", testPlanSaveIsCompareAndSet},
		{"Plan/ConcurrentUpdatesLoseNothing", testPlanConcurrentUpdates},
		{"Index/FollowsTheWrites", testIndexFollowsTheWrites},
		{"Index/CreationAndForget", testIndexCreationAndForget},
		{"Transcripts/KeptByAttempt", testTranscriptsKeptByAttempt},
		{"Transcripts/KeepTheLatest", testTranscriptsKeepTheLatest},
		{"Transcripts/LatestWithTranscripts", testLatestWithTranscripts},
	}
	tests = append(tests, auditTests...)
	tests = append(tests, labelTests...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			require.NotNil(t, s.Plans, "Store.Plans")
			require.NotNil(t, s.Tasks, "Store.Tasks")
			require.NotNil(t, s.Checkpoints, "Store.Checkpoints")
			require.NotNil(t, s.Creator, "Store.Creator")
			tt.fn(t, s)
		})
	}
}

// base is the suite's clock origin. Times are whole milliseconds in UTC, so that a store
// keeping millisecond precision still round-trips them.
var base = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func at(step int) time.Time { return base.Add(time.Duration(step) * time.Second) }

func stages() []stage.Spec {
	return []stage.Spec{
		{
			Name: "build", Kind: "sleep", Params: map[string]any{"duration": "1s"}, Timeout: time.Minute,
			Retry: stage.Policy{
				MaxAttempts: 3, InitialBackoff: time.Second, MaxBackoff: 30 * time.Second,
				Multiplier: 2, Jitter: stage.JitterFull,
			},
		},
		{
			Name: "deploy", Kind: "http", Params: map[string]any{"url": "https://{{.TenantID}}.example/deploy"},
			Retry: stage.Policy{
				MaxAttempts: 5, InitialBackoff: 2 * time.Second, MaxBackoff: time.Minute,
				Multiplier: 1.5, Jitter: stage.JitterEqual,
			},
		},
	}
}

// newPlan returns a new PENDING plan created at now, with two task ids.
func newPlan(t *testing.T, key string, now time.Time) *plan.Plan {
	t.Helper()
	p, err := plan.New(plan.Draft{
		// The ID's time is the plan's creation time: stores list plans newest first, by ID
		// (memory) or by creation time (Redis), which then agree; ulid.Make's IDs are not
		// ordered within one millisecond across goroutines.
		ID:             ulid.MustNew(ulid.Timestamp(now), ulid.DefaultEntropy()).String(),
		Name:           "rollout",
		Labels:         map[string]string{"team": "core"},
		Stages:         stages(),
		TaskIDs:        []string{ulid.Make().String(), ulid.Make().String()},
		MaxConcurrency: 3,
		FailureBudget:  2,
		IdempotencyKey: key,
		RequestHash:    "sha256-of-" + key, // stored with the plan: a repeated key is compared with it
		Approvers:      &stage.Approvers{Names: []string{"alice", "carol"}, Count: 2, NotSubmitter: true, Submitter: "bob"},
		SubmittedBy:    "bob",
	}, now)
	require.NoError(t, err)
	return p
}

func createPlan(t *testing.T, s Store, key string, now time.Time) *plan.Plan {
	t.Helper()
	p := newPlan(t, key, now)
	require.NoError(t, s.Plans.Create(t.Context(), p))
	return p
}

// newTask returns a new PENDING task of planID for tenant.
func newTask(t *testing.T, planID, tenant string, now time.Time) *task.Task {
	t.Helper()
	tk, err := task.New(planID, tenant, map[string]any{"region": "eu-west-1"}, stages(), now)
	require.NoError(t, err)
	return tk
}

// createTasks stores tasks, first creating each one's plan when the store has none: a task
// always belongs to a stored plan, which holds its stage template.
func createTasks(t *testing.T, s Store, tasks ...*task.Task) {
	t.Helper()
	byPlan := map[string][]string{}
	var order []string
	for _, tk := range tasks {
		if _, seen := byPlan[tk.PlanID()]; !seen {
			order = append(order, tk.PlanID())
		}
		byPlan[tk.PlanID()] = append(byPlan[tk.PlanID()], tk.ID())
	}
	for _, planID := range order {
		_, err := s.Plans.Plan(t.Context(), planID)
		if !errors.Is(err, plan.ErrNotFound) {
			require.NoError(t, err)
			continue
		}
		p, err := plan.New(plan.Draft{ID: planID, Name: "tasks", Stages: stages(), TaskIDs: byPlan[planID]}, tasks[0].CreatedAt())
		require.NoError(t, err)
		require.NoError(t, s.Plans.Create(t.Context(), p))
	}
	require.NoError(t, s.Tasks.Create(t.Context(), tasks))
}

// requireSameState asserts that two persisted states are equal as JSON: a store may change
// how a value is represented (time zones, number types) but not what it is.
func requireSameState(t *testing.T, want, got any, msgAndArgs ...any) {
	t.Helper()
	w, err := json.Marshal(want)
	require.NoError(t, err)
	g, err := json.Marshal(got)
	require.NoError(t, err)
	require.JSONEq(t, string(w), string(g), msgAndArgs...)
}

func requireSamePlan(t *testing.T, want *plan.Plan, got *plan.Plan) {
	t.Helper()
	require.NotNil(t, got)
	requireSameState(t, want.State(), got.State())
}

func requireSameTask(t *testing.T, want *task.Task, got *task.Task) {
	t.Helper()
	require.NotNil(t, got)
	requireSameState(t, want.State(), got.State())
}

func planIDs(ps []*plan.Plan) []string {
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ID()
	}
	return ids
}

// --- plans ---

func testPlanCreateAndRead(t *testing.T, s Store) {
	p := createPlan(t, s, "k1", at(0))
	got, err := s.Plans.Plan(t.Context(), p.ID())
	require.NoError(t, err)
	requireSamePlan(t, p, got)
	assert.Equal(t, plan.Pending, got.Status())
	assert.Equal(t, p.TaskIDs(), got.TaskIDs())

	scheduled, err := plan.New(plan.Draft{
		ID: ulid.Make().String(), Name: "later", Labels: map[string]string{"a": "b"}, Stages: stages(),
		TaskIDs: []string{ulid.Make().String()}, StartAt: at(3600),
	}, at(1))
	require.NoError(t, err)
	require.Equal(t, plan.Scheduled, scheduled.Status())
	require.NoError(t, s.Plans.Create(t.Context(), scheduled))
	got, err = s.Plans.Plan(t.Context(), scheduled.ID())
	require.NoError(t, err)
	requireSamePlan(t, scheduled, got)
	assert.True(t, at(3600).Equal(got.StartAt()))
}

func testPlanNotFound(t *testing.T, s Store) {
	createPlan(t, s, "k1", at(0))
	_, err := s.Plans.Plan(t.Context(), ulid.Make().String())
	require.ErrorIs(t, err, plan.ErrNotFound)
	_, err = s.Plans.ByIdempotencyKey(t.Context(), "unknown-key")
	require.ErrorIs(t, err, plan.ErrNotFound)

	createPlan(t, s, "", at(1))
	_, err = s.Plans.ByIdempotencyKey(t.Context(), "")
	require.ErrorIs(t, err, plan.ErrNotFound, "a plan submitted without a key is not found by the empty key")
}

func testPlanSave(t *testing.T, s Store) {
	p := createPlan(t, s, "", at(0))
	require.NoError(t, p.Start(at(1)))
	require.NoError(t, s.Plans.Save(t.Context(), p))
	got, err := s.Plans.Plan(t.Context(), p.ID())
	require.NoError(t, err)
	requireSamePlan(t, p, got)
	assert.Equal(t, plan.Running, got.Status())
	assert.True(t, at(1).Equal(got.StartedAt()))

	require.NoError(t, got.Fail(at(2)))
	require.NoError(t, s.Plans.Save(t.Context(), got))
	again, err := s.Plans.Plan(t.Context(), p.ID())
	require.NoError(t, err)
	requireSamePlan(t, got, again)
	assert.Equal(t, plan.Failed, again.Status())
	assert.True(t, at(2).Equal(again.FinishedAt()))
}

func testPlanNotShared(t *testing.T, s Store) {
	p := createPlan(t, s, "", at(0))
	require.NoError(t, p.Start(at(1))) // not saved
	got, err := s.Plans.Plan(t.Context(), p.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Pending, got.Status(), "a change that was not saved is not stored")

	require.NoError(t, got.Cancel(at(2))) // not saved either
	again, err := s.Plans.Plan(t.Context(), p.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Pending, again.Status(), "reads return independent aggregates")
}

func testPlanIdempotencyKey(t *testing.T, s Store) {
	first := createPlan(t, s, "submit-1", at(0))
	createPlan(t, s, "submit-1", at(1))
	other := createPlan(t, s, "submit-2", at(2))

	got, err := s.Plans.ByIdempotencyKey(t.Context(), "submit-1")
	require.NoError(t, err)
	assert.Equal(t, first.ID(), got.ID(), "the plan first submitted with a key wins")
	requireSamePlan(t, first, got)
	assert.Equal(t, "sha256-of-submit-1", got.RequestHash(), "the request hash is kept with the plan")

	got, err = s.Plans.ByIdempotencyKey(t.Context(), "submit-2")
	require.NoError(t, err)
	assert.Equal(t, other.ID(), got.ID())

	// The key keeps pointing at the plan after it changed.
	require.NoError(t, first.Start(at(3)))
	require.NoError(t, s.Plans.Save(t.Context(), first))
	got, err = s.Plans.ByIdempotencyKey(t.Context(), "submit-1")
	require.NoError(t, err)
	assert.Equal(t, plan.Running, got.Status())
}

// createListed creates six plans, oldest first, and sets ids[1], ids[3] and ids[4] RUNNING.
func createListed(t *testing.T, s Store) []string {
	t.Helper()
	var ids []string
	for i := range 6 {
		p := createPlan(t, s, "", at(i))
		if i == 1 || i == 3 || i == 4 {
			require.NoError(t, p.Start(at(i)))
			require.NoError(t, s.Plans.Save(t.Context(), p))
		}
		ids = append(ids, p.ID())
	}
	return ids
}

func testPlanList(t *testing.T, s Store) {
	empty, err := s.Plans.List(t.Context(), plan.Filter{})
	require.NoError(t, err)
	assert.Empty(t, empty)

	ids := createListed(t, s)
	tests := []struct {
		name   string
		filter plan.Filter
		want   []string
	}{
		{"all", plan.Filter{}, []string{ids[5], ids[4], ids[3], ids[2], ids[1], ids[0]}},
		{"limit", plan.Filter{Limit: 2}, []string{ids[5], ids[4]}},
		{"limit above count", plan.Filter{Limit: 100}, []string{ids[5], ids[4], ids[3], ids[2], ids[1], ids[0]}},
		{"status", plan.Filter{Status: plan.Running}, []string{ids[4], ids[3], ids[1]}},
		{"status pending", plan.Filter{Status: plan.Pending}, []string{ids[5], ids[2], ids[0]}},
		{"status with no plans", plan.Filter{Status: plan.Completed}, nil},
		{"status and limit", plan.Filter{Status: plan.Running, Limit: 2}, []string{ids[4], ids[3]}},
		{"before", plan.Filter{Before: ids[3]}, []string{ids[2], ids[1], ids[0]}},
		{"before and limit", plan.Filter{Before: ids[4], Limit: 2}, []string{ids[3], ids[2]}},
		{"before and status", plan.Filter{Before: ids[4], Status: plan.Running}, []string{ids[3], ids[1]}},
		{"before, status and limit", plan.Filter{Before: ids[5], Status: plan.Pending, Limit: 1}, []string{ids[2]}},
		{"before the oldest", plan.Filter{Before: ids[0]}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Plans.List(t.Context(), tt.filter)
			require.NoError(t, err)
			if tt.want == nil {
				assert.Empty(t, got)
				return
			}
			assert.Equal(t, tt.want, planIDs(got))
		})
	}

	t.Run("listed plans are complete", func(t *testing.T) {
		got, err := s.Plans.List(t.Context(), plan.Filter{Limit: 1})
		require.NoError(t, err)
		require.Len(t, got, 1)
		stored, err := s.Plans.Plan(t.Context(), ids[5])
		require.NoError(t, err)
		requireSamePlan(t, stored, got[0])
	})
}

func testPlanListPaging(t *testing.T, s Store) {
	ids := createListed(t, s)
	var seen []string
	before := ""
	for page := 0; ; page++ {
		require.Less(t, page, 10, "paging must end")
		got, err := s.Plans.List(t.Context(), plan.Filter{Before: before, Limit: 4})
		require.NoError(t, err)
		if len(got) == 0 {
			break
		}
		require.LessOrEqual(t, len(got), 4)
		seen = append(seen, planIDs(got)...)
		before = got[len(got)-1].ID()
	}
	assert.Equal(t, []string{ids[5], ids[4], ids[3], ids[2], ids[1], ids[0]}, seen)
}

// --- tasks ---

func testTaskCreateAndRead(t *testing.T, s Store) {
	planID := ulid.Make().String()
	a := newTask(t, planID, "tenant-a", at(0))
	b := newTask(t, planID, "tenant-b", at(0))
	createTasks(t, s, a, b)

	for _, want := range []*task.Task{a, b} {
		got, err := s.Tasks.Task(t.Context(), want.ID())
		require.NoError(t, err)
		requireSameTask(t, want, got)
		assert.Equal(t, task.Pending, got.Status())

		latest, err := s.Tasks.Latest(t.Context(), want.TenantID())
		require.NoError(t, err)
		assert.Equal(t, want.ID(), latest.ID())
		requireSameTask(t, want, latest)
	}
	_, err := s.Checkpoints.Checkpoint(t.Context(), a.ID())
	require.ErrorIs(t, err, checkpoint.ErrNotFound, "a new task has no checkpoint")
}

func testTaskNotFound(t *testing.T, s Store) {
	known := newTask(t, ulid.Make().String(), "tenant-a", at(0))
	createTasks(t, s, known)
	unknown := ulid.Make().String()

	_, err := s.Tasks.Task(t.Context(), unknown)
	require.ErrorIs(t, err, task.ErrNotFound)
	_, err = s.Tasks.Latest(t.Context(), "tenant-unknown")
	require.ErrorIs(t, err, task.ErrNotFound)
	_, err = s.Tasks.ByIDs(t.Context(), []string{unknown})
	require.ErrorIs(t, err, task.ErrNotFound)
	_, err = s.Tasks.BumpFence(t.Context(), unknown)
	require.ErrorIs(t, err, task.ErrNotFound)
	_, err = s.Checkpoints.Checkpoint(t.Context(), unknown)
	require.ErrorIs(t, err, checkpoint.ErrNotFound)
}

func testTaskLatest(t *testing.T, s Store) {
	first := newTask(t, ulid.Make().String(), "tenant-a", at(0))
	other := newTask(t, first.PlanID(), "tenant-b", at(0))
	createTasks(t, s, first, other)

	latest, err := s.Tasks.Latest(t.Context(), "tenant-a")
	require.NoError(t, err)
	assert.Equal(t, first.ID(), latest.ID())

	endTask(t, s, first)
	second := newTask(t, ulid.Make().String(), "tenant-a", at(10))
	createTasks(t, s, second)

	latest, err = s.Tasks.Latest(t.Context(), "tenant-a")
	require.NoError(t, err)
	assert.Equal(t, second.ID(), latest.ID(), "a later task becomes the tenant's latest")
	requireSameTask(t, second, latest)

	old, err := s.Tasks.Task(t.Context(), first.ID())
	require.NoError(t, err, "the earlier task stays readable")
	assert.Equal(t, task.Cancelled, old.Status())

	latest, err = s.Tasks.Latest(t.Context(), "tenant-b")
	require.NoError(t, err)
	assert.Equal(t, other.ID(), latest.ID(), "other tenants are unaffected")

	// Saving the older task does not move the index back, nor take the tenant.
	require.NoError(t, s.Tasks.Save(t.Context(), old, nil))
	latest, err = s.Tasks.Latest(t.Context(), "tenant-a")
	require.NoError(t, err)
	assert.Equal(t, second.ID(), latest.ID())
}

func testTaskByIDs(t *testing.T, s Store) {
	planID := ulid.Make().String()
	var tasks []*task.Task
	for i := range 4 {
		tasks = append(tasks, newTask(t, planID, fmt.Sprintf("tenant-%d", i), at(0)))
	}
	createTasks(t, s, tasks...)

	order := []int{2, 0, 3, 1}
	ids := make([]string, len(order))
	for i, j := range order {
		ids[i] = tasks[j].ID()
	}
	got, err := s.Tasks.ByIDs(t.Context(), ids)
	require.NoError(t, err)
	require.Len(t, got, len(ids))
	for i, j := range order {
		requireSameTask(t, tasks[j], got[i])
	}

	none, err := s.Tasks.ByIDs(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, none)

	_, err = s.Tasks.ByIDs(t.Context(), []string{tasks[0].ID(), ulid.Make().String(), tasks[1].ID()})
	require.ErrorIs(t, err, task.ErrNotFound)
}

func testTaskStatuses(t *testing.T, s Store) {
	planID := ulid.Make().String()
	pending := newTask(t, planID, "statuses-a", at(0))
	cancelled := newTask(t, planID, "statuses-b", at(0))
	createTasks(t, s, pending, cancelled)
	require.NoError(t, cancelled.Cancel(nil, at(1)))
	require.NoError(t, s.Tasks.Save(t.Context(), cancelled, nil))

	got, err := s.Tasks.Statuses(t.Context(), []string{cancelled.ID(), pending.ID()})
	require.NoError(t, err)
	assert.Equal(t, []task.Status{task.Cancelled, task.Pending}, got)

	none, err := s.Tasks.Statuses(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, none)

	_, err = s.Tasks.Statuses(t.Context(), []string{pending.ID(), ulid.Make().String()})
	require.ErrorIs(t, err, task.ErrNotFound)
}

func testTaskNotShared(t *testing.T, s Store) {
	tk := newTask(t, ulid.Make().String(), "tenant-a", at(0))
	createTasks(t, s, tk)
	require.NoError(t, tk.Start(1, at(1))) // not saved
	got, err := s.Tasks.Task(t.Context(), tk.ID())
	require.NoError(t, err)
	assert.Equal(t, task.Pending, got.Status(), "a change that was not saved is not stored")
	assert.Zero(t, got.Fence())
}

// startRun takes the task's fence like a new run does, and starts it.
func startRun(t *testing.T, s Store, id string, now time.Time) (*task.Task, uint64) {
	t.Helper()
	epochTask, err := s.Tasks.BumpFence(t.Context(), id)
	require.NoError(t, err)
	epoch := epochTask.Fence()
	tk, err := s.Tasks.Task(t.Context(), id)
	require.NoError(t, err)
	require.NoError(t, tk.Start(epoch, now))
	return tk, epoch
}

// completeStage runs stage i of tk and records it in cp.
func completeStage(t *testing.T, tk *task.Task, cp *checkpoint.Checkpoint, i int, epoch uint64, now time.Time) {
	t.Helper()
	name := tk.Stages()[i].Name
	require.NoError(t, tk.Record(task.Attempt{
		StageIndex: i, Stage: name, Run: tk.Attempt(), Attempt: 1, StartedAt: now, EndedAt: now,
		Outcome: task.OutcomeSucceeded,
	}))
	require.NoError(t, tk.CompleteStage(i, now))
	out := json.RawMessage(fmt.Sprintf(`{"stage":%q,"index":%d}`, name, i))
	require.NoError(t, cp.Record(i, name, out, epoch, now))
}

func readCheckpoint(t *testing.T, s Store, id string) *checkpoint.Checkpoint {
	t.Helper()
	cp, err := s.Checkpoints.Checkpoint(t.Context(), id)
	require.NoError(t, err)
	require.NotNil(t, cp)
	return cp
}

func testSaveWithCheckpoint(t *testing.T, s Store) {
	tk := newTask(t, ulid.Make().String(), "tenant-a", at(0))
	createTasks(t, s, tk)
	run, epoch := startRun(t, s, tk.ID(), at(1))
	cp := checkpoint.New(tk.ID())
	completeStage(t, run, cp, 0, epoch, at(2))

	require.NoError(t, s.Tasks.Save(t.Context(), run, cp))

	got, err := s.Tasks.Task(t.Context(), tk.ID())
	require.NoError(t, err)
	requireSameTask(t, run, got)
	assert.Equal(t, task.Running, got.Status())
	assert.Equal(t, 1, got.CurrentStage())
	assert.Equal(t, epoch, got.Fence())
	assert.Len(t, got.Ledger(), 1)

	stored := readCheckpoint(t, s, tk.ID())
	requireSameState(t, cp.State(), stored.State())
	assert.Equal(t, 0, stored.LastCompletedStageIndex())
	assert.Equal(t, 1, stored.Next())
	assert.Equal(t, []string{"build"}, stored.CompletedStages())
	assert.Equal(t, map[string]any{"build": map[string]any{"stage": "build", "index": 0.0}}, stored.Outputs())

	// The second stage and completion, in one more atomic write.
	completeStage(t, run, cp, 1, epoch, at(3))
	require.NoError(t, run.Complete(at(4)))
	require.NoError(t, s.Tasks.Save(t.Context(), run, cp))
	got, err = s.Tasks.Task(t.Context(), tk.ID())
	require.NoError(t, err)
	requireSameTask(t, run, got)
	assert.Equal(t, task.Completed, got.Status())
	requireSameState(t, cp.State(), readCheckpoint(t, s, tk.ID()).State())

	// A null output round-trips as null.
	other := newTask(t, tk.PlanID(), "tenant-b", at(0))
	createTasks(t, s, other)
	run2, epoch2 := startRun(t, s, other.ID(), at(1))
	cp2 := checkpoint.New(other.ID())
	require.NoError(t, run2.CompleteStage(0, at(2)))
	require.NoError(t, cp2.Record(0, "build", nil, epoch2, at(2)))
	require.NoError(t, s.Tasks.Save(t.Context(), run2, cp2))
	stored2 := readCheckpoint(t, s, other.ID())
	out, ok := stored2.Output("build")
	require.True(t, ok, "a null output is still recorded")
	assert.Contains(t, []string{"", "null"}, string(out), "stored as null (nil in memory, JSON null elsewhere)")
	assert.Equal(t, map[string]any{"build": map[string]any{}}, stored2.Outputs(), "and reads as an empty object")
	assert.Equal(t, 0, stored2.LastCompletedStageIndex())
}

func testSaveWithoutCheckpoint(t *testing.T, s Store) {
	tk := newTask(t, ulid.Make().String(), "tenant-a", at(0))
	createTasks(t, s, tk)
	run, epoch := startRun(t, s, tk.ID(), at(1))
	require.NoError(t, s.Tasks.Save(t.Context(), run, nil))
	_, err := s.Checkpoints.Checkpoint(t.Context(), tk.ID())
	require.ErrorIs(t, err, checkpoint.ErrNotFound, "no checkpoint until one is saved")

	cp := checkpoint.New(tk.ID())
	completeStage(t, run, cp, 0, epoch, at(2))
	require.NoError(t, s.Tasks.Save(t.Context(), run, cp))
	want := cp.State()

	require.NoError(t, run.Record(task.Attempt{
		StageIndex: 1, Stage: "deploy", Run: 1, Attempt: 1, StartedAt: at(3), EndedAt: at(4),
		Outcome: task.OutcomeFailed, Class: stage.ClassRetryable, Error: "503", Code: 503, Backoff: 2 * time.Second,
	}))
	require.NoError(t, s.Tasks.Save(t.Context(), run, nil))

	got, err := s.Tasks.Task(t.Context(), tk.ID())
	require.NoError(t, err)
	requireSameTask(t, run, got)
	assert.Len(t, got.Ledger(), 2)
	requireSameState(t, want, readCheckpoint(t, s, tk.ID()).State(), "a save without a checkpoint keeps the previous one")
}

func testBumpFence(t *testing.T, s Store) {
	tk := newTask(t, ulid.Make().String(), "tenant-a", at(0))
	createTasks(t, s, tk)
	before := tk.State()
	for want := uint64(1); want <= 3; want++ {
		gotTask, err := s.Tasks.BumpFence(t.Context(), tk.ID())
		require.NoError(t, err)
		got := gotTask.Fence()
		assert.Equal(t, want, got)
		stored, err := s.Tasks.Task(t.Context(), tk.ID())
		require.NoError(t, err)
		assert.Equal(t, want, stored.Fence())

		assert.Equal(t, want, stored.Version(), "a bump is a write: it advances the version")
		after := stored.State()
		after.Fence, after.Version = before.Fence, before.Version
		requireSameState(t, before, after, "BumpFence changes only the fence and the version")
	}

	// A task still carrying fence 0 can no longer be saved.
	require.ErrorIs(t, s.Tasks.Save(t.Context(), tk, nil), task.ErrFenced)

	// The run that starts with the bumped epoch can.
	stored, err := s.Tasks.Task(t.Context(), tk.ID())
	require.NoError(t, err)
	require.NoError(t, stored.Start(stored.Fence(), at(1)))
	require.NoError(t, s.Tasks.Save(t.Context(), stored, nil))

	// Other tasks are unaffected.
	other := newTask(t, tk.PlanID(), "tenant-b", at(0))
	createTasks(t, s, other)
	epochTask, err := s.Tasks.BumpFence(t.Context(), other.ID())
	require.NoError(t, err)
	epoch := epochTask.Fence()
	assert.Equal(t, uint64(1), epoch)
}

func testStaleSaveFenced(t *testing.T, s Store) {
	tk := newTask(t, ulid.Make().String(), "tenant-a", at(0))
	createTasks(t, s, tk)

	// Run 1 completes the first stage.
	old, oldEpoch := startRun(t, s, tk.ID(), at(1))
	oldCP := checkpoint.New(tk.ID())
	completeStage(t, old, oldCP, 0, oldEpoch, at(2))
	require.NoError(t, s.Tasks.Save(t.Context(), old, oldCP))

	// A new run takes the tenant over: the stored fence moves past run 1's.
	newEpochTask, err := s.Tasks.BumpFence(t.Context(), tk.ID())
	require.NoError(t, err)
	newEpoch := newEpochTask.Fence()
	require.Greater(t, newEpoch, oldEpoch)
	storedTask, err := s.Tasks.Task(t.Context(), tk.ID())
	require.NoError(t, err)
	storedCP := readCheckpoint(t, s, tk.ID())
	wantTask, wantCP := storedTask.State(), storedCP.State()

	// Run 1 does not know yet, and tries to write its progress.
	completeStage(t, old, oldCP, 1, oldEpoch, at(3))
	require.NoError(t, old.Complete(at(4)))
	tests := []struct {
		name string
		cp   *checkpoint.Checkpoint
	}{
		{"with a checkpoint", oldCP},
		{"without a checkpoint", nil},
		{"with a checkpoint carrying the new epoch", func() *checkpoint.Checkpoint {
			cp := checkpoint.New(tk.ID())
			require.NoError(t, cp.Record(0, "build", json.RawMessage(`"forged"`), newEpoch, at(5)))
			return cp
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Tasks.Save(t.Context(), old, tt.cp)
			require.ErrorIs(t, err, task.ErrFenced)

			got, err := s.Tasks.Task(t.Context(), tk.ID())
			require.NoError(t, err)
			requireSameState(t, wantTask, got.State(), "a fenced save must not change the task")
			requireSameState(t, wantCP, readCheckpoint(t, s, tk.ID()).State(),
				"a fenced save must not change the checkpoint")
		})
	}

	// The new run writes normally, and run 1 stays fenced afterwards.
	require.NoError(t, storedTask.Interrupt(task.Failure{Stage: "deploy", Class: stage.ClassLeaseLost, Message: "owner died"}, at(6)))
	require.NoError(t, storedTask.Retry(storedCP.Next(), at(6)))
	require.NoError(t, storedTask.Start(newEpoch, at(7)))
	require.NoError(t, s.Tasks.Save(t.Context(), storedTask, nil))
	require.ErrorIs(t, s.Tasks.Save(t.Context(), old, oldCP), task.ErrFenced)
	got, err := s.Tasks.Task(t.Context(), tk.ID())
	require.NoError(t, err)
	requireSameTask(t, storedTask, got)
	assert.Equal(t, 2, got.Attempt())
	assert.Equal(t, 1, got.CurrentStage())
}

func testConcurrency(t *testing.T, s Store) {
	const n = 50
	p := createPlan(t, s, "", at(0))
	tasks := make([]*task.Task, n)
	ids := make([]string, n)
	for i := range tasks {
		tasks[i] = newTask(t, p.ID(), fmt.Sprintf("tenant-%02d", i), at(0))
		ids[i] = tasks[i].ID()
	}
	createTasks(t, s, tasks...)

	ctx := t.Context()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = concurrentRun(ctx, s, p.ID(), ids, i)
		}()
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))

	got, err := s.Tasks.ByIDs(ctx, ids)
	require.NoError(t, err)
	for i, tk := range got {
		assert.Equal(t, ids[i], tk.ID())
		assert.Equal(t, task.Running, tk.Status())
		assert.Equal(t, 1, tk.CurrentStage())
		assert.Equal(t, uint64(1), tk.Fence())
		assert.Len(t, tk.Ledger(), 1)
		cp := readCheckpoint(t, s, tk.ID())
		assert.Equal(t, map[string]any{"build": map[string]any{"i": float64(i)}}, cp.Outputs())
	}
}

// concurrentRun is run i of testConcurrency, among the others: it runs the first stage of
// task ids[i] (of plan planID) and saves it with its checkpoint, then reads the store.
func concurrentRun(ctx context.Context, s Store, planID string, ids []string, i int) error {
	id := ids[i]
	epochTask, err := s.Tasks.BumpFence(ctx, id)
	if err != nil {
		return fmt.Errorf("bump: %w", err)
	}
	epoch := epochTask.Fence()
	tk, err := s.Tasks.Task(ctx, id)
	if err != nil {
		return fmt.Errorf("task: %w", err)
	}
	cp := checkpoint.New(id)
	now := at(1 + i)
	steps := []func() error{
		func() error { return tk.Start(epoch, now) },
		func() error {
			return tk.Record(task.Attempt{Stage: "build", Run: 1, Attempt: 1, StartedAt: now, EndedAt: now, Outcome: task.OutcomeSucceeded})
		},
		func() error { return tk.CompleteStage(0, now) },
		func() error { return cp.Record(0, "build", json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)), epoch, now) },
		func() error { return s.Tasks.Save(ctx, tk, cp) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return concurrentReads(ctx, s, planID, tk, ids)
}

// concurrentReads is the reads of a concurrentRun that saved tk: its tenant's latest task,
// every task, its checkpoint, the plan and the list of plans.
func concurrentReads(ctx context.Context, s Store, planID string, tk *task.Task, ids []string) error {
	id := tk.ID()
	latest, err := s.Tasks.Latest(ctx, tk.TenantID())
	if err != nil {
		return fmt.Errorf("latest: %w", err)
	}
	if latest.ID() != id {
		return fmt.Errorf("latest of %s is %s, want %s", tk.TenantID(), latest.ID(), id)
	}
	all, err := s.Tasks.ByIDs(ctx, ids)
	if err != nil {
		return fmt.Errorf("by ids: %w", err)
	}
	if len(all) != len(ids) {
		return fmt.Errorf("by ids: %d tasks, want %d", len(all), len(ids))
	}
	got, err := s.Checkpoints.Checkpoint(ctx, id)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if got.Next() != 1 {
		return fmt.Errorf("checkpoint of %s: next %d, want 1", id, got.Next())
	}
	if _, err := s.Plans.Plan(ctx, planID); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	if _, err := s.Plans.List(ctx, plan.Filter{Limit: 10}); err != nil {
		return fmt.Errorf("list: %w", err)
	}
	return nil
}

// endTask cancels a stored task, so its tenant may take a new one.
func endTask(t *testing.T, s Store, tk *task.Task) {
	t.Helper()
	cur, err := s.Tasks.Task(t.Context(), tk.ID())
	require.NoError(t, err)
	require.NoError(t, cur.Cancel(nil, cur.UpdatedAt().Add(time.Second))) // writes move forward in time
	require.NoError(t, s.Tasks.Save(t.Context(), cur, nil))
}

func testBusyTenant(t *testing.T, s Store) {
	first := newTask(t, ulid.Make().String(), "tenant-a", at(0))
	createTasks(t, s, first)

	free := newTask(t, ulid.Make().String(), "tenant-free", at(1))
	again := newTask(t, free.PlanID(), "tenant-a", at(1))
	err := s.Tasks.Create(t.Context(), []*task.Task{free, again})
	require.ErrorIs(t, err, task.ErrTenantBusy)
	var busy *task.BusyError
	require.ErrorAs(t, err, &busy)
	assert.Equal(t, []string{"tenant-a"}, busy.Tenants)

	_, err = s.Tasks.Task(t.Context(), free.ID())
	require.ErrorIs(t, err, task.ErrNotFound, "nothing of a refused batch is created")
	_, err = s.Tasks.Latest(t.Context(), "tenant-free")
	require.ErrorIs(t, err, task.ErrNotFound)
	latest, err := s.Tasks.Latest(t.Context(), "tenant-a")
	require.NoError(t, err)
	assert.Equal(t, first.ID(), latest.ID())

	// The free tenant is not left claimed by the refused batch.
	createTasks(t, s, newTask(t, ulid.Make().String(), "tenant-free", at(2)))
	// Once the first task ended, the tenant takes a new task.
	endTask(t, s, first)
	createTasks(t, s, newTask(t, ulid.Make().String(), "tenant-a", at(6)))
}

func testReactivate(t *testing.T, s Store) {
	first := newTask(t, ulid.Make().String(), "tenant-a", at(0))
	createTasks(t, s, first)
	require.NoError(t, s.Tasks.Reactivate(t.Context(), first), "the tenant's latest task holds it")

	endTask(t, s, first)
	require.NoError(t, s.Tasks.Reactivate(t.Context(), first), "an ended latest task may run again")
	retried, err := s.Tasks.Task(t.Context(), first.ID())
	require.NoError(t, err)
	require.NoError(t, retried.Retry(0, at(6)))
	require.NoError(t, s.Tasks.Save(t.Context(), retried, nil))
	busy := newTask(t, ulid.Make().String(), "tenant-a", at(7))
	require.ErrorIs(t, s.Tasks.Create(t.Context(), []*task.Task{busy}), task.ErrTenantBusy, "the retried task holds the tenant")

	endTask(t, s, first)
	second := newTask(t, ulid.Make().String(), "tenant-a", at(10))
	createTasks(t, s, second)
	require.ErrorIs(t, s.Tasks.Reactivate(t.Context(), first), task.ErrTenantBusy, "the tenant moved on")
	require.NoError(t, s.Tasks.Reactivate(t.Context(), second))
}

func testCreatePlan(t *testing.T, s Store) {
	p := newPlan(t, "", at(0))
	tasks := []*task.Task{}
	for i, id := range p.TaskIDs() {
		tk, err := task.Load(task.State{
			ID: id, PlanID: p.ID(), TenantID: fmt.Sprintf("tenant-%d", i), Stages: stages(),
			Status: task.Pending, Attempt: 1, CreatedAt: at(0), UpdatedAt: at(0),
		})
		require.NoError(t, err)
		tasks = append(tasks, tk)
	}
	require.NoError(t, s.Creator.CreatePlan(t.Context(), p, tasks))
	got, err := s.Plans.Plan(t.Context(), p.ID())
	require.NoError(t, err)
	requireSamePlan(t, p, got)
	all, err := s.Tasks.ByIDs(t.Context(), p.TaskIDs())
	require.NoError(t, err)
	require.Len(t, all, len(tasks))

	// A second plan for a busy tenant creates nothing at all.
	p2 := newPlan(t, "", at(1))
	clash, err := task.Load(task.State{
		ID: p2.TaskIDs()[0], PlanID: p2.ID(), TenantID: "tenant-0", Stages: stages(),
		Status: task.Pending, Attempt: 1, CreatedAt: at(1), UpdatedAt: at(1),
	})
	require.NoError(t, err)
	require.ErrorIs(t, s.Creator.CreatePlan(t.Context(), p2, []*task.Task{clash}), task.ErrTenantBusy)
	_, err = s.Plans.Plan(t.Context(), p2.ID())
	require.ErrorIs(t, err, plan.ErrNotFound)
}
