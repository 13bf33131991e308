package app

import (
	"strconv"

	"github.com/executor-dev/executor/domain/event"
	"github.com/executor-dev/executor/events"
)

// EventSource hands out the executor's events: those it still keeps, then the live ones
// (events.Hub).
type EventSource interface {
	Subscribe(f events.Filter, after uint64) (replay []event.Event, s *events.Subscription, gap bool)
}

// Watch is a watcher's view of the events: Replay (kept events after its last one), then
// Live. Gap tells that events after its last one were dropped before it came back. Close it.
type Watch struct {
	Replay []event.Event
	Live   *events.Subscription
	Gap    bool
}

// Close ends the watch.
func (w *Watch) Close() { w.Live.Close() }

// WatchEvents starts a watch of the events of planID and/or tenantID (empty: any), after the
// event lastEventID (empty: from the oldest event kept). ErrNoEvents when there is no source.
func (s *Service) WatchEvents(planID, tenantID, lastEventID string) (*Watch, error) {
	if s.Events == nil {
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
	var after uint64
	if lastEventID != "" {
		n, err := strconv.ParseUint(lastEventID, 10, 64)
		if err != nil {
			return nil, invalid("Last-Event-ID", "must be the id of an event: a positive integer")
		}
		after = n
	}
	replay, live, gap := s.Events.Subscribe(events.Filter{PlanID: planID, TenantID: tenantID}, after)
	return &Watch{Replay: replay, Live: live, Gap: gap}, nil
}
