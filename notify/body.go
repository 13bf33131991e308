package notify

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// maxSamples bounds the failures a notification names.
const maxSamples = 5

// Digest is what a notification says of its plan, read when it is sent.
type Digest struct {
	Plan    *plan.Plan
	Summary task.Summary
}

// Message is a notification's JSON body (format json).
type Message struct {
	ID       string         `json:"id"` // "<planId>/<noticeId>": the same for every attempt and every executor
	Event    string         `json:"event"`
	At       *time.Time     `json:"at,omitempty"`
	PlanID   string         `json:"planId"`
	PlanName string         `json:"planName,omitempty"`
	Status   string         `json:"status"` // the plan's, when sent
	Ring     *int           `json:"ring,omitempty"`
	RingName string         `json:"ringName,omitempty"`
	Detail   string         `json:"detail,omitempty"`
	Total    int            `json:"total"`
	Counts   map[string]int `json:"counts"` // the plan's tasks by status, when sent
	Samples  []Sample       `json:"samples,omitempty"`
}

// Sample is one failure a notification names: a failure class, how many tasks failed with
// it, and one of them.
type Sample struct {
	Class   string `json:"class"`
	Count   int    `json:"count"`
	Tenant  string `json:"tenant"`
	Message string `json:"message,omitempty"`
}

// eventID is a notice's id across the executors: "<planId>/<noticeId>".
func eventID(planID string, n plan.Notice) string { return planID + "/" + n.ID }

// message builds the JSON body of notice n of digest d.
func message(d Digest, n plan.Notice) Message {
	p := d.Plan
	m := Message{ID: eventID(p.ID(), n), Event: n.Event, PlanID: p.ID(), PlanName: p.Name(), Status: string(p.Status()),
		Detail: n.Detail, Total: d.Summary.Total, Counts: map[string]int{}}
	if !n.At.IsZero() {
		at := n.At.UTC()
		m.At = &at
	}
	if waves := p.Rollout().Waves; n.Ring >= 0 && n.Ring < len(waves) {
		ring := n.Ring
		m.Ring, m.RingName = &ring, waves[ring].Name
	}
	for st, c := range d.Summary.Statuses {
		if c > 0 {
			m.Counts[string(st)] = c
		}
	}
	classes := make([]string, 0, len(d.Summary.Classes))
	for c := range d.Summary.Classes {
		classes = append(classes, c)
	}
	slices.SortFunc(classes, func(a, b string) int { return d.Summary.Classes[b].Count - d.Summary.Classes[a].Count })
	for _, c := range classes[:min(len(classes), maxSamples)] {
		cc := d.Summary.Classes[c]
		m.Samples = append(m.Samples, Sample{Class: c, Count: cc.Count, Tenant: cc.TenantID, Message: cc.Message})
	}
	return m
}

// body renders m in format (plan.FormatJSON, plan.FormatSlack).
func body(m Message, format string) ([]byte, error) {
	if format != plan.FormatSlack {
		return json.Marshal(m)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*%s* plan %q (%s) is %s", m.Event, m.PlanName, m.PlanID, m.Status)
	if m.RingName != "" {
		fmt.Fprintf(&b, ", ring %s", m.RingName)
	}
	if m.Detail != "" {
		fmt.Fprintf(&b, ": %s", m.Detail)
	}
	statuses := make([]string, 0, len(m.Counts))
	for st, c := range m.Counts {
		statuses = append(statuses, fmt.Sprintf("%s %d", st, c))
	}
	slices.Sort(statuses)
	fmt.Fprintf(&b, "\n%d tenants: %s", m.Total, strings.Join(statuses, ", "))
	for _, s := range m.Samples {
		fmt.Fprintf(&b, "\n• %d %s, e.g. %s: %s", s.Count, s.Class, s.Tenant, s.Message)
	}
	return json.Marshal(map[string]string{"text": b.String(), "event_id": m.ID})
}
