package plan_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

func notified(t *testing.T, on ...string) *plan.Plan {
	t.Helper()
	d := canaryDraft(1, plan.ThenApprove)
	d.Notify = []plan.Destination{{URL: "https://hooks.example/x", On: on}}
	return newPlan(t, d)
}

// A plan records a notice with each transition a destination wants, with an id that goes on
// after a reload; the once-per-plan ones only once; nothing a destination does not want.
func TestAPlanRecordsTheNoticesItsDestinationsWant(t *testing.T) {
	t.Parallel()
	p := notified(t, plan.EventPlanEnded, plan.EventGateWaiting, "rollback.*")
	require.NoError(t, p.Start(t0))
	assert.True(t, p.NoteOnce(plan.EventGateWaiting, "gate", t0))
	assert.False(t, p.NoteOnce(plan.EventGateWaiting, "gate", t0), "once per gate")
	assert.True(t, p.NoteOnce(plan.EventGateWaiting, "other-gate", t0))
	assert.True(t, p.NoteOnce(plan.EventRollbackStarted, "operator", t0), "rollback.* subscribes to it")
	assert.False(t, p.NoteOnce(plan.EventBudgetCrossed, "x", t0), "not wanted")
	require.NoError(t, p.Pause(t0), "not wanted: no notice")

	loaded, err := plan.Load(p.State())
	require.NoError(t, err)
	require.NoError(t, loaded.Resume())
	require.NoError(t, loaded.Fail(t0))
	var ids []string
	for _, n := range loaded.Notices() {
		ids = append(ids, n.ID)
	}
	assert.Equal(t, []string{"1-gate.waiting", "2-gate.waiting", "3-rollback.started", "4-plan.ended"}, ids)
	assert.Equal(t, "FAILED", loaded.Notices()[3].Detail)
}

// A ring's halt and its wait for approval are notices, with the ring's index.
func TestRingNotices(t *testing.T) {
	t.Parallel()
	p := notified(t, plan.EventRingHalted, plan.EventAwaitingApproval)
	require.NoError(t, p.Start(t0))
	require.NoError(t, p.HaltRing(0, "ring 0 (canary): 1 of 1 tenants failed", t0))
	_, err := p.ApproveRing(stage.Decision{Approved: true, By: "alice"}, t0) // waived: goes on
	require.NoError(t, err)
	ns := p.Notices()
	require.Len(t, ns, 1)
	assert.Equal(t, plan.EventRingHalted, ns[0].Event)
	assert.Equal(t, 0, ns[0].Ring)
}

func TestADestinationIsValidated(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		dest  plan.Destination
		field string
	}{
		{"relative url", plan.Destination{URL: "/hook", On: []string{plan.EventPlanEnded}}, "notify[0].url"},
		{"no events", plan.Destination{URL: "https://h.example/x"}, "notify[0].on"},
		{"unknown event", plan.Destination{URL: "https://h.example/x", On: []string{"plan.done"}}, "notify[0].on[0]"},
		{"unknown format", plan.Destination{URL: "https://h.example/x", On: []string{plan.EventPlanEnded}, Format: "xml"}, "notify[0].format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var fe *stage.FieldError
			require.ErrorAs(t, tt.dest.Validate(0), &fe)
			assert.Equal(t, tt.field, fe.Field)
		})
	}
}

// A destination's URL is shown by its scheme and host only, in answers and in the errors of
// calls to it: a webhook's path and query are its secret.
func TestADestinationsURLIsRedacted(t *testing.T) {
	t.Parallel()
	d := plan.Destination{URL: "https://user:pw@hooks.example:8443/services/T0/B0/SECRET?token=abc"}
	assert.Equal(t, "https://hooks.example:8443/…", d.RedactedURL())
	msg := d.Redact(`retryable: Post "https://hooks.example:8443/services/T0/B0/SECRET?token=abc": dial tcp: refused; POST https://hooks.example:8443/services/T0/B0/SECRET`)
	assert.NotContains(t, msg, "SECRET")
	assert.NotContains(t, msg, "abc")
	assert.Contains(t, msg, "https://hooks.example:8443/…")
}
