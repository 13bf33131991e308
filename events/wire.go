package events

import (
	"github.com/executor-dev/executor/domain/event"
	"github.com/executor-dev/executor/wire"
)

// ToWire is e in its JSON form (wire.Event), with id as its id: the entry ID a watcher resumes
// after when GET /v1/events sends it (Entry.ID). The one mapping of an event to the wire: the
// Redis event stream (infra/eventstream) stores the same form.
func ToWire(id string, e event.Event) wire.Event {
	out := wire.Event{
		ID: id, Kind: string(e.Kind), At: e.At, PlanID: e.PlanID, TaskID: e.TaskID, TenantID: e.TenantID,
		Status: e.Status, Stage: e.Stage, StageName: e.StageName, Run: e.Run,
	}
	if a := e.Last; a != nil {
		out.LastAttempt = &wire.EventAttempt{StageIndex: a.StageIndex, Stage: a.Stage, Attempt: a.Attempt, Outcome: a.Outcome, Class: a.Class}
	}
	if r := e.Ring; r != nil {
		out.Ring = &wire.EventRing{Index: r.Index, Wave: r.Wave, State: r.State, BakeEndsAt: r.BakeEndsAt, Halt: r.Halt}
	}
	return out
}

// FromWire is the event w describes, as ToWire's inverse. Its ID, a hub's number, is 0: w's
// id is not one (the stream keeps the number apart).
func FromWire(w wire.Event) event.Event {
	out := event.Event{
		Kind: event.Kind(w.Kind), At: w.At, PlanID: w.PlanID, TaskID: w.TaskID, TenantID: w.TenantID,
		Status: w.Status, Stage: w.Stage, StageName: w.StageName, Run: w.Run,
	}
	if a := w.LastAttempt; a != nil {
		out.Last = &event.Attempt{StageIndex: a.StageIndex, Stage: a.Stage, Attempt: a.Attempt, Outcome: a.Outcome, Class: a.Class}
	}
	if r := w.Ring; r != nil {
		out.Ring = &event.Ring{Index: r.Index, Wave: r.Wave, State: r.State, BakeEndsAt: r.BakeEndsAt, Halt: r.Halt}
	}
	return out
}
