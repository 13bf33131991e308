//go:build chaos

package chaos

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Report is what a run prints: its figures and the evidence of every violation.
type Report struct {
	Seed          int64
	Duration      time.Duration // faults and workload
	Recovery      time.Duration // the SRE's recovery until every plan ended
	Results       Results
	Plans         int
	Tasks         int
	Calls         int
	Faults        map[FaultKind]int
	Commands      map[string][2]int // kind → acknowledged, sent
	During        [2]int            // the operator's commands while faults were injected: acknowledged, sent
	Retries       int               // tasks given a new run by an operator's acknowledged retry
	RetriesDuring int               // of which while faults were injected
	Submitted     [2]int            // acknowledged, sent
	Refused409    int               // submissions refused with 409 (a tenant busy)
	Notes         []Note
}

// NewReport gathers the figures of a run.
func NewReport(cfg Config, dur, recovery time.Duration, h *History, calls []Call, snap *Snapshot, res Results) Report {
	rep := Report{Seed: cfg.Seed, Duration: dur, Recovery: recovery, Results: res,
		Plans: len(snap.Plans), Calls: len(calls),
		Faults: map[FaultKind]int{}, Commands: map[string][2]int{}, Notes: h.Notes}
	for _, rt := range h.Retries {
		if rt.Undecided {
			continue
		}
		rep.Retries++
		if rt.During {
			rep.RetriesDuring++
		}
	}
	for _, n := range res.TasksByStatus { // the tasks of plans lost with Redis's data are not counted
		rep.Tasks += n
	}
	for _, f := range h.Faults {
		rep.Faults[f.Kind]++
	}
	for _, c := range h.Commands {
		n := rep.Commands[c.Kind]
		n[1]++
		if c.Acked {
			n[0]++
		}
		rep.Commands[c.Kind] = n
		if c.During {
			rep.During[1]++
			if c.Acked {
				rep.During[0]++
			}
		}
	}
	for _, s := range h.Submissions {
		rep.Submitted[1]++
		if s.PlanID != "" {
			rep.Submitted[0]++
		}
		if s.Code == 409 {
			rep.Refused409++
		}
	}
	return rep
}

// maxEvidence bounds the evidence lines printed per check.
const maxEvidence = 25

// String prints the report.
func (rep Report) String() string {
	r := rep.Results
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("==== chaos report (seed %d: CHAOS_SEED=%d reproduces the choices) ====", rep.Seed, rep.Seed)
	line("duration                      %s of faults and workload, then %s of recovery", rep.Duration.Round(time.Second), rep.Recovery.Round(time.Second))
	line("plans                         %d (submissions acknowledged %d of %d, refused 409: %d); by status %s", rep.Plans, rep.Submitted[0], rep.Submitted[1], rep.Refused409, counts(r.PlansByStatus))
	line("tasks                         %d; by status %s", rep.Tasks, counts(r.TasksByStatus))
	line("stage calls                   %d (%d completed)", rep.Calls, r.CompletedCalls)
	line("faults injected               %d: %s", total(rep.Faults), faultCounts(rep.Faults))
	line("operator commands acked       %s; during faults %d/%d", commandCounts(rep.Commands), rep.During[0], rep.During[1])
	line("operator retries              %d tasks given a new run (%d during faults; %d honoured; %d more undecided); %d in-doubt stages re-run with their key by a retry",
		rep.Retries, rep.RetriesDuring, r.RetriesHonoured, r.RetriesUndecided, r.ReRunsRetried)
	line("tasks reaped INTERRUPTED      %d (%d while a conn-latency was on, in %d windows)", r.Reaped, r.ReapedInLatency, r.LatencyWindows)
	line("1. max in flight per tenant   %d (%s); overlaps %d; stale callers served %d; calls without a fence %d", r.MaxInFlight, r.MaxInFlightTenant, len(r.Overlaps), len(r.StaleCalls), len(r.FenceMissing))
	line("2. completed stages re-run    %d not the retry of an in-doubt attempt", len(r.ReRuns))
	line("3. cancels honoured/violated  %d/%d of %d acknowledged (%d of plans lost with Redis's data, %d retried by the operator after); retries violated %d; acknowledged plans lost %d (%d more ended before a Redis data loss, or lost to a kill then a loss: documented)",
		r.CancelsHonoured, len(r.CancelViolations), r.CancelsAcked, r.CancelsLost, r.CancelsSuperseded, len(r.RetryViolations), len(r.LostPlans), len(r.LostToDataLoss))
	line("4. stranded tasks             %d; plans not ended %d", len(r.Stranded), len(r.PlansOpen))
	line("5. API≠Redis mismatches       %d", len(r.Mismatches))
	line("6. INTERRUPTED under latency  %d", len(r.LatencyInterrupts))
	line("executor crashes, races       %d; API 5xx other than 503: %d", len(r.Exits), len(r.ServerErrors))
	for _, sec := range []struct {
		title string
		lines []string
	}{
		{"tenant in flight twice", r.Overlaps}, {"stale caller served", r.StaleCalls}, {"call without a fence", r.FenceMissing},
		{"completed stage re-run", r.ReRuns}, {"INTERRUPTED under latency alone", r.LatencyInterrupts},
		{"cancel not honoured", r.CancelViolations}, {"retry not honoured", r.RetryViolations},
		{"acknowledged plan lost", r.LostPlans}, {"stranded task", r.Stranded}, {"plan not ended", r.PlansOpen},
		{"API≠Redis", r.Mismatches}, {"executor crash", r.Exits}, {"API 5xx", r.ServerErrors},
	} {
		if len(sec.lines) == 0 {
			continue
		}
		line("-- %s (%d):", sec.title, len(sec.lines))
		for i, l := range sec.lines {
			if i == maxEvidence {
				line("   … %d more", len(sec.lines)-maxEvidence)
				break
			}
			line("   %s", l)
		}
	}
	return b.String()
}

// Timeline prints the run's notes.
func (rep Report) Timeline() string {
	var b strings.Builder
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "%s %s\n", n.At.Format("15:04:05.000"), n.Text)
	}
	return b.String()
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func total(m map[FaultKind]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func faultCounts(m map[FaultKind]int) string {
	var parts []string
	for _, k := range AllFaults {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	return strings.Join(parts, ", ")
}

func commandCounts(m map[string][2]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d/%d", k, m[k][0], m[k][1]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ") + " (acknowledged/sent)"
}
