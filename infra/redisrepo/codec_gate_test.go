package redisrepo

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// A gate's partial approvals (in the wait) and a verdict's approver and earlier approvals
// are stored and read back whole; the gate's rule travels with the plan's spec.
func TestGateApprovalsRoundTrip(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	rule := &stage.Approvers{Roles: []string{"operate"}, Names: []string{"alice", "bob"}, Count: 2, NotSubmitter: true, Submitter: "carol"}
	specs := []stage.Spec{{Name: "gate", Kind: "approval", Approvers: rule}}
	tk, err := task.New("01JWNNT770AZ1EYD5Q5D0CJJGQ", "acme", nil, specs, now)
	require.NoError(t, err)
	require.NoError(t, tk.Start(1, now))
	require.NoError(t, tk.Await("approval", "go?", now))
	alice := stage.Decision{Approved: true, Comment: "ok", DecidedAt: now, By: "alice", Role: "operate"}
	require.NoError(t, tk.Decide(alice, now))

	wait, verdict, err := encGate(tk)
	require.NoError(t, err)
	w, v, err := decGate(wait, verdict)
	require.NoError(t, err)
	assert.Equal(t, tk.Wait(), w)
	assert.Nil(t, v)

	bob := stage.Decision{Approved: true, DecidedAt: now, By: "bob", Role: "operate"}
	require.NoError(t, tk.Decide(bob, now))
	wait, verdict, err = encGate(tk)
	require.NoError(t, err)
	w, v, err = decGate(wait, verdict)
	require.NoError(t, err)
	assert.Nil(t, w)
	assert.Equal(t, tk.Verdict(), v)
	assert.Equal(t, []stage.Decision{alice}, v.Earlier)

	b, err := encSpecs(specs)
	require.NoError(t, err)
	back, err := decSpecs(b)
	require.NoError(t, err)
	assert.Equal(t, rule, back[0].Approvers)
}
