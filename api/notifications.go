package api

import (
	"net/http"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/wire"
)

// planNotifications serves GET /v1/plans/{planId}/notifications.
func (h *handlers) planNotifications(w http.ResponseWriter, r *http.Request) {
	id, err := pathParam(r, "planId")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	p, notices, err := h.svc.Notifications(r.Context(), id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.respond(w, r, http.StatusOK, NotificationsFrom(p, notices))
}

// NotificationsFrom maps a plan's notices and their deliveries to their wire form.
func NotificationsFrom(p *plan.Plan, notices []app.NoticeView) wire.NotificationList {
	out := wire.NotificationList{PlanID: p.ID(), Destinations: destinationsFrom(p.Notify()), Notifications: []wire.Notification{}}
	if out.Destinations == nil {
		out.Destinations = []wire.Destination{}
	}
	for _, n := range notices {
		wn := wire.Notification{ID: p.ID() + "/" + n.ID, Event: n.Event, At: timePtr(n.At), Detail: n.Detail,
			Deliveries: make([]wire.DeliveryStatus, len(n.Deliveries))}
		if n.Ring >= 0 {
			ring := n.Ring
			wn.Ring = &ring
		}
		for i, d := range n.Deliveries {
			wn.Deliveries[i] = deliveryFrom(d)
		}
		out.Notifications = append(out.Notifications, wn)
	}
	return out
}

// deliveryFrom maps one delivery.
func deliveryFrom(d app.DeliveryView) wire.DeliveryStatus {
	out := wire.DeliveryStatus{Destination: d.Dest, Attempts: d.Attempts, LastError: d.LastError}
	switch {
	case !d.Delivered.IsZero():
		out.Status, out.DeliveredAt = "delivered", timePtr(d.Delivered)
	case d.Dead:
		out.Status = "failed"
	case d.Attempts > 0:
		out.Status, out.NextAt = "retrying", timePtr(d.Next)
	default:
		out.Status = "pending"
	}
	return out
}
