package app

import (
	"context"
	"errors"

	"github.com/executor-dev/executor/events"
)

// EventSource hands out the executor's events (events.Hub on memory; on Redis, the reader of
// the cluster's stream, infra/eventstream): the live ones, after a replay of those after a
// Last-Event-ID. An ID it cannot read is events.ErrBadID.
type EventSource interface {
	Watch(ctx context.Context, f events.Filter, lastEventID string) (*events.Watch, error)
}

// EventWatch is a watch of the executor's events, as GET /v1/events serves it: the events
// after a Last-Event-ID, replayed page by page, then the live ones. Close it.
type EventWatch interface {
	// Gap reports that events after the Last-Event-ID were dropped: the client should reload.
	Gap() bool
	// Replay returns the next page of the events after the Last-Event-ID; an empty page
	// when the replay is over.
	Replay(ctx context.Context) ([]events.Entry, error)
	// Live returns the live events; the channel is closed when the watch ends (it fell
	// behind, or its source went away).
	Live() <-chan events.Entry
	// Fresh reports whether a live event was not replayed already.
	Fresh(e events.Entry) bool
	// Close ends the watch.
	Close()
}

// WatchEvents starts a watch of the events of planID and/or tenantID (empty: any): with
// lastEventID empty, the events from now on only; else those after that event first. A
// malformed lastEventID is a validation error naming Last-Event-ID. ErrNoEvents when there
// is no source. Close the watch.
func (s *Service) WatchEvents(ctx context.Context, planID, tenantID, lastEventID string) (EventWatch, error) {
	if s.eventSource == nil {
		return nil, ErrNoEvents
	}
	if planID != "" {
		if err := checkULID("plan", planID); err != nil {
			return nil, err
		}
	}
	if tenantID != "" {
		if err := checkTenantID("tenant", tenantID); err != nil {
			return nil, err
		}
	}
	w, err := s.eventSource.Watch(ctx, events.Filter{PlanID: planID, TenantID: tenantID}, lastEventID)
	if errors.Is(err, events.ErrBadID) {
		return nil, invalid("Last-Event-ID", "must be the id of an event this stream sent")
	}
	if err != nil {
		return nil, err
	}
	return eventWatch{w}, nil
}

// eventWatch is an events.Watch as an EventWatch.
type eventWatch struct{ w *events.Watch }

func (e eventWatch) Gap() bool                                          { return e.w.Gap }
func (e eventWatch) Replay(ctx context.Context) ([]events.Entry, error) { return e.w.Replay(ctx) }
func (e eventWatch) Live() <-chan events.Entry                          { return e.w.Live() }
func (e eventWatch) Fresh(entry events.Entry) bool                      { return e.w.Fresh(entry) }
func (e eventWatch) Close()                                             { e.w.Close() }
