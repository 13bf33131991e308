package wire

import "time"

// Rings is a rolling plan's rollout as returned: its rings in order and where it stands.
// Current is the index of the current ring; Halted, when set, says which ring halted and why
// (the failures and the threshold, or the failed check): approve goes on, reject cancels the
// rest.
type Rings struct {
	Order         string     `json:"order"`
	Seed          uint64     `json:"seed,omitempty"`
	FailureBudget string     `json:"failureBudget,omitempty"` // the rings' default
	Current       int        `json:"current"`
	Halted        *RingHalt  `json:"halted,omitempty"`
	Waves         []RingView `json:"waves"`
}

// RingHalt is why a rolling plan halted.
type RingHalt struct {
	Ring   int    `json:"ring"`
	Wave   string `json:"wave"`
	Reason string `json:"reason"`
}

// RingView is one ring: its wave's settings, how many tenants it holds, and its state:
// pending, running, baking, checking, awaiting_approval, passed, halted or rejected. A baking
// ring says when its bake ends and how long is left.
type RingView struct {
	Name           string     `json:"name"`
	Size           string     `json:"size"` // as submitted: a count, a percentage or "rest"
	Tenants        int        `json:"tenants"`
	State          string     `json:"state"`
	Since          *time.Time `json:"since,omitempty"` // the current ring: when its state began
	MaxConcurrency int        `json:"maxConcurrency,omitempty"`
	Bake           string     `json:"bake,omitempty"`
	BakeEndsAt     *time.Time `json:"bakeEndsAt,omitempty"`
	BakeLeftMs     int64      `json:"bakeLeftMs,omitempty"`
	Then           string     `json:"then"`
	FailureBudget  string     `json:"failureBudget"` // the ring's own, or the plan's: "0" halts at any failure
	// Tolerates is how many of the ring's tenants may fail within its budget: one more
	// halts the plan (10% of 10 tenants: 1; "0": 0).
	Tolerates int       `json:"tolerates"`
	Health    *StageRef `json:"health,omitempty"`
	// Analysis are the ring's analyses, with what they measured in its latest bake (none
	// before it baked).
	Analysis []AnalysisView `json:"analysis,omitempty"`
}

// AnalysisView is one analysis of a ring: what it measures (Query as it runs, rendered with
// the ring's data, unless it reads a secret) and how it judges, and, once the ring baked, its
// counts, its latest measurements (oldest first, at most 10) and when it measures next (while
// the ring bakes).
type AnalysisView struct {
	Name              string        `json:"name"`
	Kind              string        `json:"kind"`
	Query             string        `json:"query"`
	Interval          string        `json:"interval"`
	FailureLimit      int           `json:"failureLimit"`
	InconclusiveLimit int           `json:"inconclusiveLimit"`
	Successful        int           `json:"successful"`
	Failed            int           `json:"failed"`
	Inconclusive      int           `json:"inconclusive"`
	NextAt            *time.Time    `json:"nextAt,omitempty"`
	Measurements      []Measurement `json:"measurements"`
}

// Measurement is one measurement of an analysis: when, the value the query returned (a
// number, samples with their labels, "empty" or "error"), its verdict (successful, failed or
// inconclusive) and why.
type Measurement struct {
	At      time.Time `json:"at"`
	Value   string    `json:"value"`
	Verdict string    `json:"verdict"`
	Message string    `json:"message,omitempty"`
}
