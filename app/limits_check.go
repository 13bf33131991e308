package app

import (
	"encoding/json"
	"fmt"
)

// checkLimits reports, through add, every limit req exceeds, each naming its field:
//
//   - "tenants": more than min(MaxTenants, MaxQueued) tenants (a plan that could never fit
//     in the queue is refused as invalid, never with a 429 that no retry would cure);
//   - "stages": more than MaxStages stages, or all stages' params together larger than
//     MaxParamsBytes as JSON (the template every tenant shares);
//   - "stages[i].params", "tenants[i].params": params that cannot be encoded as JSON;
//   - "tenants[i].params": one tenant's params larger than MaxParamsBytes as JSON.
func (l Limits) checkLimits(req SubmitRequest, add func(field, reason string)) {
	l = l.withDefaults()
	if maxTenants := min(l.MaxTenants, l.MaxQueued); len(req.Tenants) > maxTenants {
		add("tenants", fmt.Sprintf("at most %d tenants per plan", maxTenants))
	}
	if len(req.Stages) > l.MaxStages {
		add("stages", fmt.Sprintf("at most %d stages per plan", l.MaxStages))
	}
	total := 0
	for i, sp := range req.Stages {
		n, err := jsonSize(sp.Params)
		if err != nil {
			add(fmt.Sprintf("stages[%d].params", i), "cannot be encoded as JSON: "+err.Error())
		}
		total += n
	}
	if total > l.MaxParamsBytes {
		add("stages", fmt.Sprintf("the stages' params together are %d bytes as JSON: at most %d", total, l.MaxParamsBytes))
	}
	for i, tn := range req.Tenants {
		field := fmt.Sprintf("tenants[%d].params", i)
		switch n, err := jsonSize(tn.Params); {
		case err != nil:
			add(field, "cannot be encoded as JSON: "+err.Error())
		case n > l.MaxParamsBytes:
			add(field, fmt.Sprintf("are %d bytes as JSON: at most %d", n, l.MaxParamsBytes))
		}
	}
}

// jsonSize is the size of params encoded as JSON; no params count nothing.
func jsonSize(params map[string]any) (int, error) {
	if len(params) == 0 {
		return 0, nil
	}
	b, err := json.Marshal(params)
	return len(b), err
}

// exceeded reports whether req has more tenants or stages than l allows (checkLimits reports
// them): such a plan is refused for its size alone, without rendering its templates.
func (l Limits) exceeded(req SubmitRequest) bool {
	l = l.withDefaults()
	return len(req.Tenants) > min(l.MaxTenants, l.MaxQueued) || len(req.Stages) > l.MaxStages
}
