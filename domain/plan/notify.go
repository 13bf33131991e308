package plan

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

// The events a plan notifies of (Destination.On).
const (
	EventPlanEnded        = "plan.ended"             // the plan ended: COMPLETED, FAILED or CANCELLED
	EventPlanPaused       = "plan.paused"            // the plan was paused (by an operator, or by the executors)
	EventRingHalted       = "ring.halted"            // a ring halted: its budget crossed, its check or analysis failed
	EventAwaitingApproval = "ring.awaiting_approval" // a ring waits for an operator's approval
	EventGateWaiting      = "gate.waiting"           // the first tenant waits at a gate (one per gate of the plan)
	EventBudgetCrossed    = "budget.crossed"         // the plan-wide failure budget was crossed: nothing new starts
	EventRollbackStarted  = "rollback.started"       // the plan's first tenant began rolling back
)

// Events lists every event a destination may subscribe to; "rollback.*" subscribes to every
// rollback event.
var Events = []string{EventPlanEnded, EventPlanPaused, EventRingHalted, EventAwaitingApproval,
	EventGateWaiting, EventBudgetCrossed, EventRollbackStarted}

// Bounds of a plan's notifications.
const (
	MaxDestinations = 8  // destinations of one plan
	MaxNotices      = 64 // notices a plan keeps: beyond, the oldest go
	maxURL          = 2048
)

// Formats of a notification's body.
const (
	FormatJSON  = "json"  // the notice as JSON
	FormatSlack = "slack" // {"text": "..."}: a Slack (or Mattermost, Teams workflow) incoming webhook
)

// Destination is where a plan's notifications go.
type Destination struct {
	URL    string   // http or https; checked against the executors' outbound allow-list
	On     []string // events (Events; "rollback.*" for every rollback event)
	Format string   // FormatJSON (default) or FormatSlack
	// Secret names the secret (serve --secrets-dir) whose value signs each body (HMAC-SHA256,
	// X-Executor-Signature-256); "" for none.
	Secret string
}

// RedactedURL is the destination's URL as answers and logs show it: its scheme and host only
// (a webhook's path and query often hold its secret, as Slack's do).
func (d Destination) RedactedURL() string {
	u, err := url.Parse(d.URL)
	if err != nil || u.Host == "" {
		return "(invalid)"
	}
	out := u.Scheme + "://" + u.Host
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		out += "/…"
	}
	return out
}

// Redact replaces, in text (an error of a call to the destination), every form of its URL
// with RedactedURL.
func (d Destination) Redact(text string) string {
	u, err := url.Parse(d.URL)
	if err != nil || u.Host == "" {
		return text
	}
	red := d.RedactedURL()
	base := u.Scheme + "://" + u.Host
	forms := []string{d.URL, u.Redacted(), base + u.EscapedPath(), base + u.Path}
	if u.RawQuery != "" {
		forms = append(forms, base+u.EscapedPath()+"?"+u.RawQuery, base+u.Path+"?"+u.RawQuery)
	}
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) }) // the longest first: no half-replaced form
	for _, form := range forms {
		if form != base && form != red {
			text = strings.ReplaceAll(text, form, red)
		}
	}
	return text
}

// Wants reports whether the destination subscribes to event.
func (d Destination) Wants(event string) bool {
	for _, on := range d.On {
		if on == event || (strings.HasSuffix(on, ".*") && strings.HasPrefix(event, strings.TrimSuffix(on, "*"))) {
			return true
		}
	}
	return false
}

// Validate checks destination i (its fields named "notify[i]…").
func (d Destination) Validate(i int) error {
	field := fmt.Sprintf("notify[%d]", i)
	bad := func(sub, reason string) error {
		return &stage.FieldError{Field: field + sub, Reason: reason, Err: ErrInvalid}
	}
	u, err := url.Parse(d.URL)
	switch {
	case len(d.URL) > maxURL:
		return bad(".url", fmt.Sprintf("must be at most %d bytes", maxURL))
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return bad(".url", "must be an absolute http or https URL")
	case len(d.On) == 0:
		return bad(".on", "must name at least one event: "+strings.Join(Events, ", ")+" or rollback.*")
	case d.Format != "" && d.Format != FormatJSON && d.Format != FormatSlack:
		return bad(".format", "must be json or slack")
	}
	for j, on := range d.On {
		if !slices.Contains(Events, on) && on != "rollback.*" {
			return bad(fmt.Sprintf(".on[%d]", j), fmt.Sprintf("%q is not one of %s or rollback.*", on, strings.Join(Events, ", ")))
		}
	}
	return nil
}

// Notice is something a plan notifies of: one event, with a stable ID (a retried write of
// the same transition makes the same notice), kept with the plan (Notices) in the same write
// as the transition, so an event that happened is never lost before it is delivered.
type Notice struct {
	ID     string // "<seq>-<event>": unique within the plan, in the order they happened
	Event  string
	At     time.Time
	Ring   int    // the ring's index, for ring events (-1 otherwise)
	Detail string // what SREs are told: the halt's reason, the gate, the status the plan ended in
}

// lastSeq is the sequence number of the last of notices (0: none).
func lastSeq(notices []Notice) uint64 {
	if len(notices) == 0 {
		return 0
	}
	seq, _, _ := strings.Cut(notices[len(notices)-1].ID, "-")
	n, _ := strconv.ParseUint(seq, 10, 64)
	return n
}

// Notify returns the plan's destinations.
func (p *Plan) Notify() []Destination { return p.notify }

// Notices returns what the plan notified of, oldest first (at most MaxNotices).
func (p *Plan) Notices() []Notice { return append([]Notice(nil), p.notices...) }

// wants reports whether any destination subscribes to event.
func (p *Plan) wants(event string) bool {
	for _, d := range p.notify {
		if d.Wants(event) {
			return true
		}
	}
	return false
}

// note records a notice of event when a destination subscribes to it.
func (p *Plan) note(event string, ring int, detail string, now time.Time) {
	if !p.wants(event) {
		return
	}
	p.noticeSeq++
	n := Notice{ID: strconv.FormatUint(p.noticeSeq, 10) + "-" + event, Event: event, At: now.UTC(), Ring: ring, Detail: detail}
	p.notices = append(append([]Notice(nil), p.notices...), n)
	if over := len(p.notices) - MaxNotices; over > 0 {
		p.notices = p.notices[over:]
	}
}

// noted reports whether the plan notified of event with detail already.
func (p *Plan) noted(event, detail string) bool {
	for _, n := range p.notices {
		if n.Event == event && n.Detail == detail {
			return true
		}
	}
	return false
}

// NoteOnce records a notice of event with detail the first time the plan meets it, for the
// events told once per plan (EventGateWaiting per gate: detail the stage, however many tenants
// wait there; EventBudgetCrossed; EventRollbackStarted per trigger), when a destination wants
// it. It reports whether it recorded one (the plan is then to be saved).
func (p *Plan) NoteOnce(event, detail string, now time.Time) bool {
	if !p.wants(event) || p.noted(event, detail) {
		return false
	}
	p.note(event, -1, detail, now)
	return true
}

// Delivery is where the delivery of one notice to one destination stands (the executors
// that deliver write it; the plan's notifications are read with it).
type Delivery struct {
	Attempts  int
	Next      time.Time // the earliest next attempt (zero: at once)
	Delivered time.Time // when the destination accepted it (zero: not yet)
	Dead      bool      // given up: every attempt failed, or the destination is refused for good
	LastError string
	Owner     string    // the executor that claimed it, until Until
	Until     time.Time // the claim's end
}

// Done reports whether nothing more will be sent.
func (d Delivery) Done() bool { return !d.Delivered.IsZero() || d.Dead }

// DeliveryKey names delivery of notice noticeID to destination dest: "<notice>/<dest>".
func DeliveryKey(noticeID string, dest int) string { return noticeID + "/" + strconv.Itoa(dest) }
