package task_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/errcode"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// waitingAt returns a task WAITING at a gate (its second stage) governed by rule.
func waitingAt(t *testing.T, rule *stage.Approvers) *task.Task {
	t.Helper()
	specs := []stage.Spec{{Name: "a", Kind: "noop"}, {Name: "gate", Kind: "approval", Approvers: rule}}
	tk, err := task.New("01JWNNT770AZ1EYD5Q5D0CJJGQ", "acme", nil, specs, t0)
	require.NoError(t, err)
	require.NoError(t, tk.Start(1, t0))
	require.NoError(t, tk.CompleteStage(0, t0))
	require.NoError(t, tk.Await("approval", "", t0))
	return tk
}

func by(actor, role string, approved bool) stage.Decision {
	return stage.Decision{Approved: approved, By: actor, Role: role, DecidedAt: t0.Add(time.Minute)}
}

func TestAGateJudgesItsDecisionsByItsRule(t *testing.T) {
	t.Parallel()
	rule := &stage.Approvers{Roles: []string{"operate"}, Names: []string{"alice", "bob", "carol"}, NotSubmitter: true, Submitter: "bob"}
	tests := []struct {
		name      string
		decision  stage.Decision
		forbidden bool
	}{
		{"an allowed approver", by("alice", "operate", true), false},
		{"an allowed rejection", by("carol", "operate", false), false},
		{"the submitter", by("bob", "operate", true), true},
		{"the submitter's rejection", by("bob", "operate", false), true},
		{"a name not listed", by("mallory", "operate", true), true},
		{"a role not listed", by("alice", "read", true), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk := waitingAt(t, rule)
			err := tk.Decide(tt.decision, t0.Add(time.Minute))
			if tt.forbidden {
				require.ErrorIs(t, err, stage.ErrForbidden)
				_, coded := errcode.Find(err, errcode.Forbidden)
				assert.True(t, coded, "answered 403")
				assert.Equal(t, task.Waiting, tk.Status(), "nothing changed")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, task.Pending, tk.Status())
			assert.Equal(t, tt.decision.By, tk.Verdict().By)
		})
	}
}

func TestAGateAskingForTwoApprovalsWaitsForTheSecond(t *testing.T) {
	t.Parallel()
	tk := waitingAt(t, &stage.Approvers{Count: 2})
	now := t0.Add(time.Minute)
	require.NoError(t, tk.Decide(by("alice", "operate", true), now))
	require.Equal(t, task.Waiting, tk.Status(), "one approval of two")
	require.Len(t, tk.Wait().Approvals, 1)
	assert.Equal(t, "alice", tk.Wait().Approvals[0].By)
	loaded, err := task.Load(tk.State())
	require.NoError(t, err)
	require.Len(t, loaded.Wait().Approvals, 1, "the approval is persisted with the wait")

	require.ErrorIs(t, tk.Decide(by("alice", "operate", true), now), stage.ErrAlreadyApproved, "two approvals by distinct approvers")
	require.Equal(t, task.Waiting, tk.Status())
	require.NoError(t, tk.Decide(by("bob", "operate", true), now))
	require.Equal(t, task.Pending, tk.Status())
	v := tk.Verdict()
	assert.Equal(t, "bob", v.By)
	require.Len(t, v.Earlier, 1)
	assert.Equal(t, "alice", v.Earlier[0].By)
}

func TestOneRejectionRejectsAGateAskingForSeveral(t *testing.T) {
	t.Parallel()
	tk := waitingAt(t, &stage.Approvers{Count: 3})
	now := t0.Add(time.Minute)
	require.NoError(t, tk.Decide(by("alice", "operate", true), now))
	require.NoError(t, tk.Decide(by("bob", "operate", false), now))
	require.Equal(t, task.Pending, tk.Status())
	assert.False(t, tk.Verdict().Approved)
}
