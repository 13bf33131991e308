package api

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/wire"
)

// budgetOf reads the plan's failureBudget: a number is the plan-wide count; a string is a share
// ("5%", or a count) of each ring's tenants. What does not read is reported through bad.
func budgetOf(req wire.PlanRequest, bad func(field, reason string)) (count int, ring *plan.Share) {
	switch v := req.FailureBudget.(type) {
	case nil:
		return 0, nil
	case string:
		s, err := plan.ParseShare(v)
		if err != nil {
			bad("failureBudget", err.Error())
			return 0, nil
		}
		return 0, &s
	}
	n, ok := number(req.FailureBudget)
	if !ok {
		bad("failureBudget", "must be a count of failed tasks (a number) or a share of each ring's tenants (\"5%\")")
	}
	return n, nil
}

// rolloutOf reads the plan's waves, order and seed into r (whose FailureBudget is set).
func rolloutOf(req wire.PlanRequest, r plan.Rollout, duration func(field, s string) time.Duration, bad func(field, reason string)) plan.Rollout {
	r.Order, r.Seed = plan.Order(req.Order), req.Seed
	for i, w := range req.Waves {
		field := fmt.Sprintf("waves[%d]", i)
		wave := plan.Wave{Name: w.Name, MaxConcurrency: w.MaxConcurrency, Then: plan.Then(w.Then), Bake: duration(field+".bake", w.Bake)}
		switch v := w.Size.(type) {
		case string:
			if v == "rest" {
				wave.Rest = true
				break
			}
			s, err := plan.ParseShare(v)
			if err != nil {
				bad(field+".size", err.Error()+", nor \"rest\"")
			}
			wave.Size = s
		case nil:
			bad(field+".size", "is required: a count, a percentage (\"10%\") or \"rest\"")
		default:
			n, ok := number(v)
			if !ok {
				bad(field+".size", "must be a count, a percentage (\"10%\") or \"rest\"")
			}
			wave.Size = plan.Share{Count: n}
		}
		if w.FailureBudget != nil {
			var s plan.Share
			var err error
			if str, ok := w.FailureBudget.(string); ok {
				s, err = plan.ParseShare(str)
			} else if n, ok := number(w.FailureBudget); ok {
				s = plan.Share{Count: n}
			} else {
				err = fmt.Errorf("must be a count or a percentage (\"5%%\")")
			}
			if err != nil {
				bad(field+".failureBudget", err.Error())
			} else {
				wave.FailureBudget = &s
			}
		}
		if w.Health != nil {
			h := stageSpec(*w.Health, field+".health", duration)
			wave.Health = &h
		}
		wave.Analysis = analysisSpecs(w.Analysis, field, bad)
		r.Waves = append(r.Waves, wave)
	}
	return r
}

// number reads a whole JSON number (decoded with UseNumber, or as a Go number by a client).
func number(v any) (int, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := strconv.Atoi(n.String())
		return i, err == nil
	case float64:
		return int(n), n == float64(int(n))
	case int:
		return n, true
	}
	return 0, false
}
