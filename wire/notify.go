package wire

import "time"

// NotifyRequest is one destination of a plan's notifications (PlanRequest.Notify).
type NotifyRequest struct {
	// URL receives a POST per notification: http or https, checked against the executors'
	// outbound allow-list (--http-allow) as a stage's url is.
	URL string `json:"url"`
	// On lists the events: plan.ended, plan.paused, ring.halted, ring.awaiting_approval,
	// gate.waiting, budget.crossed, rollback.started, or rollback.* for every rollback event.
	On []string `json:"on"`
	// Format is json (default: the notification as JSON) or slack ({"text": …}).
	Format string `json:"format,omitempty"`
	// Secret names a secret (serve --secrets-dir) whose value signs each body: header
	// X-Executor-Signature-256: sha256=<hex HMAC-SHA256>.
	Secret string `json:"secret,omitempty"`
}

// Destination is a plan's notification destination as answers show it: its URL's scheme and
// host only (a webhook's path often holds its secret).
type Destination struct {
	Index  int      `json:"index"`
	URL    string   `json:"url"`
	On     []string `json:"on"`
	Format string   `json:"format"`
	Secret string   `json:"secret,omitempty"` // the signing secret's name, never its value
}

// NotificationList is GET /v1/plans/{planId}/notifications: the plan's destinations, and
// its notices, oldest first, each with its delivery to every destination that wants it.
type NotificationList struct {
	PlanID        string         `json:"planId"`
	Destinations  []Destination  `json:"destinations"`
	Notifications []Notification `json:"notifications"`
}

// Notification is one notice of a plan.
type Notification struct {
	ID         string           `json:"id"` // "<planId>/<noticeId>", the X-Executor-Event-Id header
	Event      string           `json:"event"`
	At         *time.Time       `json:"at,omitempty"`
	Ring       *int             `json:"ring,omitempty"`
	Detail     string           `json:"detail,omitempty"`
	Deliveries []DeliveryStatus `json:"deliveries"`
}

// DeliveryStatus is a notification's delivery to one destination: pending (not tried yet),
// retrying (failed, tried again at nextAt), delivered, or failed (given up).
type DeliveryStatus struct {
	Destination int        `json:"destination"`
	Status      string     `json:"status"`
	Attempts    int        `json:"attempts"`
	DeliveredAt *time.Time `json:"deliveredAt,omitempty"`
	NextAt      *time.Time `json:"nextAt,omitempty"`
	LastError   string     `json:"lastError,omitempty"`
}
