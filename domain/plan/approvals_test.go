package plan_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

func ringDecision(actor string, approved bool) stage.Decision {
	return stage.Decision{Approved: approved, By: actor, Role: "operate", DecidedAt: t0.Add(time.Minute)}
}

func TestARingIsDecidedByThePlansRule(t *testing.T) {
	t.Parallel()
	d := canaryDraft(1, plan.ThenApprove)
	d.Approvers = &stage.Approvers{NotSubmitter: true, Submitter: "bob"}
	d.SubmittedBy = "bob"
	p := newPlan(t, d)
	_, err := p.ApproveRing(ringDecision("bob", true), t0)
	require.ErrorIs(t, err, stage.ErrForbidden, "the submitter")
	require.ErrorIs(t, p.RejectRing(ringDecision("bob", false), t0), stage.ErrForbidden)
	assert.Empty(t, p.Decisions(), "a refused decision is not kept")

	started, err := p.ApproveRing(ringDecision("alice", true), t0)
	require.NoError(t, err)
	assert.True(t, started)
	require.Len(t, p.Decisions(), 1)
	assert.Equal(t, "alice", p.Decisions()[0].By)
	assert.Equal(t, 0, p.Decisions()[0].Ring)
	assert.Equal(t, "bob", p.SubmittedBy())

	loaded, err := plan.Load(p.State())
	require.NoError(t, err)
	assert.Equal(t, p.Decisions(), loaded.Decisions(), "kept with the plan")
	assert.Equal(t, p.Approvers(), loaded.Approvers())
}

func TestARingAskingForTwoApprovalsCountsTheFirst(t *testing.T) {
	t.Parallel()
	d := canaryDraft(1, plan.ThenApprove)
	d.Approvers = &stage.Approvers{Count: 2}
	p := newPlan(t, d)
	_, err := p.ApproveRing(ringDecision("alice", true), t0)
	require.ErrorIs(t, err, plan.ErrMoreApprovals)
	assert.Empty(t, p.Decisions(), "ApproveRing changes nothing short of the count")
	require.NoError(t, p.CountApproval(ringDecision("alice", true), t0))
	require.Len(t, p.Decisions(), 1)
	assert.True(t, p.Decisions()[0].Partial)
	assert.Equal(t, 0, p.Ring().Index, "the ring does not move on one approval")

	require.ErrorIs(t, p.CountApproval(ringDecision("alice", true), t0), stage.ErrAlreadyApproved)
	require.ErrorIs(t, p.CountApproval(ringDecision("bob", true), t0), plan.ErrEnoughApprovals)
	started, err := p.ApproveRing(ringDecision("bob", true), t0)
	require.NoError(t, err)
	assert.True(t, started)
	assert.Equal(t, 1, p.Ring().Index)
	require.Len(t, p.Decisions(), 2)
	assert.False(t, p.Decisions()[1].Partial)
}

func TestAnApproversRuleIsValidated(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		rule  stage.Approvers
		field string
	}{
		{"more approvals than names", stage.Approvers{Names: []string{"alice"}, Count: 2}, "approvers.count"},
		{"a negative count", stage.Approvers{Count: -1}, "approvers.count"},
		{"a bad name", stage.Approvers{Names: []string{"al ice"}}, "approvers.names[0]"},
		{"a bad role", stage.Approvers{Roles: []string{""}}, "approvers.roles[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := canaryDraft(1, plan.ThenApprove)
			d.Approvers = &tt.rule
			_, err := plan.New(d, t0)
			var fe *stage.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.field, fe.Field)
		})
	}
}
