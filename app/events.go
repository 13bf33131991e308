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

// WatchEvents starts a watch of the events of planID and/or tenantID (empty: any): with
// lastEventID empty, the events from now on only; else those after that event first. A
// malformed lastEventID is a validation error naming Last-Event-ID. ErrNoEvents when there
// is no source. Close the watch.
func (s *Service) WatchEvents(ctx context.Context, planID, tenantID, lastEventID string) (*events.Watch, error) {
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
	w, err := s.Events.Watch(ctx, events.Filter{PlanID: planID, TenantID: tenantID}, lastEventID)
	if errors.Is(err, events.ErrBadID) {
		return nil, invalid("Last-Event-ID", "must be the id of an event this stream sent")
	}
	return w, err
}
