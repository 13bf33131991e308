package redisrepo

import (
	"encoding/json"
	"time"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

// ringDecisionJSON is one decision on a ring, as the plan hash's "decisions" field holds it
// (a JSON array, oldest first; "" when none).
type ringDecisionJSON struct {
	Ring int `json:"g"`
	decisionJSON
	Partial bool `json:"p,omitempty"`
}

// encApproversField encodes the plan hash's "approvers" field ("" without a rule).
func encApproversField(a *stage.Approvers) (string, error) {
	if a == nil {
		return "", nil
	}
	b, err := json.Marshal(encApprovers(a))
	return string(b), err
}

// decApproversField decodes the "approvers" field (absent in plans written before rules).
func decApproversField(v string) (*stage.Approvers, error) {
	if v == "" {
		return nil, nil
	}
	var j approversJSON
	if err := json.Unmarshal([]byte(v), &j); err != nil {
		return nil, err
	}
	return decApprovers(&j), nil
}

// encRingDecisions encodes the plan hash's "decisions" field.
func encRingDecisions(ds []plan.RingDecision) string {
	if len(ds) == 0 {
		return ""
	}
	out := make([]ringDecisionJSON, len(ds))
	for i, d := range ds {
		out[i] = ringDecisionJSON{Ring: d.Ring, decisionJSON: encDecision(d.Decision), Partial: d.Partial}
	}
	b, _ := json.Marshal(out) // plain strings, ints, bools and times: never fails
	return string(b)
}

// decRingDecisions decodes the "decisions" field (absent in plans written before it).
func decRingDecisions(v string) ([]plan.RingDecision, error) {
	if v == "" {
		return nil, nil
	}
	var in []ringDecisionJSON
	if err := json.Unmarshal([]byte(v), &in); err != nil {
		return nil, err
	}
	out := make([]plan.RingDecision, len(in))
	for i, j := range in {
		out[i] = plan.RingDecision{Ring: j.Ring, Decision: decDecision(j.decisionJSON), Partial: j.Partial}
	}
	return out, nil
}

// destinationJSON is a notification destination as the plan hash's "notify" field holds it
// (a JSON array; "" without any).
type destinationJSON struct {
	URL    string   `json:"url"`
	On     []string `json:"on"`
	Format string   `json:"format,omitempty"`
	Secret string   `json:"secret,omitempty"`
}

// noticeJSON is a notice as the plan hash's "notices" status field holds it.
type noticeJSON struct {
	ID     string    `json:"id"`
	Event  string    `json:"e"`
	At     time.Time `json:"t,omitzero"`
	Ring   int       `json:"g"`
	Detail string    `json:"d,omitempty"`
}

func encNotify(ds []plan.Destination) string {
	if len(ds) == 0 {
		return ""
	}
	out := make([]destinationJSON, len(ds))
	for i, d := range ds {
		out[i] = destinationJSON(d)
	}
	b, _ := json.Marshal(out) // strings only: never fails
	return string(b)
}

func decNotify(v string) ([]plan.Destination, error) {
	if v == "" {
		return nil, nil
	}
	var in []destinationJSON
	if err := json.Unmarshal([]byte(v), &in); err != nil {
		return nil, err
	}
	out := make([]plan.Destination, len(in))
	for i, d := range in {
		out[i] = plan.Destination(d)
	}
	return out, nil
}

func encNotices(ns []plan.Notice) string {
	if len(ns) == 0 {
		return ""
	}
	out := make([]noticeJSON, len(ns))
	for i, n := range ns {
		out[i] = noticeJSON(n)
	}
	b, _ := json.Marshal(out) // strings, ints and times: never fails
	return string(b)
}

func decNotices(v string) ([]plan.Notice, error) {
	if v == "" {
		return nil, nil
	}
	var in []noticeJSON
	if err := json.Unmarshal([]byte(v), &in); err != nil {
		return nil, err
	}
	out := make([]plan.Notice, len(in))
	for i, n := range in {
		out[i] = plan.Notice(n)
	}
	return out, nil
}
