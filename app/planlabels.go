package app

import (
	"fmt"
	"maps"
	"slices"

	"github.com/executor-dev/executor/domain/plan"
)

// MaxPlanScan bounds the plans one page of a listing by labels examines: a selector few plans
// match answers a page with fewer plans than its limit (maybe none), and a cursor to go on
// from the last plan examined, rather than reading every plan of the store.
const MaxPlanScan = 5000

// checkLabelSelector checks a listing's label selector (field "label"): at most maxLabels
// labels (a plan has no more), each key a label key as a submission's labels have.
func checkLabelSelector(labels map[string]string, maxLabels int) error {
	if len(labels) > maxLabels {
		return invalid("label", fmt.Sprintf("at most %d labels, as a plan has", maxLabels))
	}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if !labelKeyPattern.MatchString(k) {
			return invalid("label", fmt.Sprintf("%q is not a label key: a label key must match %s", k, labelKeyPattern))
		}
	}
	return nil
}

// scanBound is f with the bound on the plans its page examines: MaxPlanScan when it selects
// by labels, none otherwise (a listing by status alone reads until its page is full).
func scanBound(f plan.Filter) plan.Filter {
	if len(f.Labels) > 0 && (f.Scan <= 0 || f.Scan > MaxPlanScan) {
		f.Scan = MaxPlanScan
	}
	return f
}
