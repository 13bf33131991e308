package events_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/event"
	"github.com/executor-dev/executor/events"
)

// An event survives its wire form, all fields set, but for its number: the wire's id is the
// entry ID given.
func TestWireFormRoundTrips(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 24, 1, 2, 3, 4, time.UTC)
	e := event.Event{
		ID: 7, Kind: event.Task, At: at, PlanID: "p", TaskID: "t", TenantID: "acme", Status: "FAILED",
		Stage: 2, StageName: "push", Run: 3,
		Last: &event.Attempt{StageIndex: 2, Stage: "push", Attempt: 1, Outcome: "failed", Class: "permanent"},
		Ring: &event.Ring{Index: 1, Wave: "ten", State: "baking", BakeEndsAt: &at, Halt: "why"},
	}
	w := events.ToWire("1732390000123-0-2", e)
	require.Equal(t, "1732390000123-0-2", w.ID)
	want := e
	want.ID = 0
	require.Equal(t, want, events.FromWire(w))
}
