package plan

// Filter selects plans for a listing, newest first.
type Filter struct {
	Status Status // empty: any
	// Labels selects the plans that have every one of these labels with this value (a plan
	// may have more); empty: any.
	Labels map[string]string
	Before string // a plan id: list plans created before it (paging cursor); empty: from the newest
	Limit  int    // at most this many (callers bound it)
	// Scan bounds how many plans a listing examines, matching or not (0: no bound), so that a
	// filter few plans match costs a bounded read. A listing that examined Scan plans without
	// finding Limit matching ones stops there and returns those it found (maybe none); it then
	// sets *Resume, when Resume is not nil, to the id of the last plan it examined: the
	// Before of the listing that goes on. Resume is left alone otherwise.
	Scan   int
	Resume *string
}

// Matches reports whether p is in the filter's status and has its labels (Before, Limit and
// Scan are the listing's, not a plan's).
func (f Filter) Matches(p *Plan) bool {
	return (f.Status == "" || p.Status() == f.Status) && f.MatchesLabels(p.labels)
}

// MatchesLabels reports whether labels hold every label of the filter: what a store can tell
// from a plan's labels alone, before it reads the plan.
func (f Filter) MatchesLabels(labels map[string]string) bool {
	for k, v := range f.Labels {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}
