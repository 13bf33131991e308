package redisrepo

import (
	"encoding/json"

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
