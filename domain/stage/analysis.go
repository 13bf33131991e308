package stage

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// An analysis measures a metric again and again and judges each measurement against its
// conditions: the prometheus kind per tenant (a stage), and a ring's analysis throughout its
// bake. This file holds what both share: how often and how many times it measures, how many
// failed or inconclusive measurements it tolerates, and what one measurement is.

// Verdict is how one measurement was judged.
type Verdict string

// Verdicts.
const (
	VerdictSuccessful   Verdict = "successful"   // the success condition held (or the failure one did not)
	VerdictFailed       Verdict = "failed"       // the failure condition held (or the success one did not)
	VerdictInconclusive Verdict = "inconclusive" // neither could say: no data, the metric store unreachable, a condition that could not be evaluated
)

// Valid reports whether v is one of the verdicts.
func (v Verdict) Valid() bool {
	return v == VerdictSuccessful || v == VerdictFailed || v == VerdictInconclusive
}

// MaxMeasurementText bounds a Measurement's Value and Message, in bytes.
const MaxMeasurementText = 512

// Measurement is one measurement of an analysis: when it was taken, the value the query
// returned (as text: a number, a list of them, or "empty"), its verdict and why (the condition
// that decided, or what made it inconclusive).
type Measurement struct {
	At      time.Time
	Value   string
	Verdict Verdict
	Message string
}

// Bounded returns m with its texts cut to MaxMeasurementText bytes.
func (m Measurement) Bounded() Measurement {
	m.Value, m.Message = cut(m.Value), cut(m.Message)
	return m
}

func cut(s string) string {
	if len(s) <= MaxMeasurementText {
		return s
	}
	return strings.ToValidUTF8(s[:MaxMeasurementText-3], "") + "..." // a character cut in two dropped
}

// Tally counts the verdicts of an analysis' measurements.
type Tally struct {
	Successful   int
	Failed       int
	Inconclusive int
}

// Add counts one verdict.
func (t *Tally) Add(v Verdict) {
	switch v {
	case VerdictSuccessful:
		t.Successful++
	case VerdictFailed:
		t.Failed++
	case VerdictInconclusive:
		t.Inconclusive++
	}
}

// Total is the number of measurements counted.
func (t Tally) Total() int { return t.Successful + t.Failed + t.Inconclusive }

// Bounds and defaults of an analysis.
const (
	DefaultAnalysisInterval = 30 * time.Second
	MinAnalysisInterval     = time.Second
	MaxAnalysisInterval     = time.Hour
	MaxAnalysisCount        = 1000 // measurements of one stage attempt
	MaxAnalysisLimit        = 1000 // failureLimit, inconclusiveLimit
	// MaxAnalysisSpan bounds how long a stage's measurements take: (count-1) × interval.
	MaxAnalysisSpan = 24 * time.Hour
)

// OnEmpty says what a query that returned nothing (no sample, or only NaN: no traffic) counts as.
type OnEmpty string

// What an empty result counts as.
const (
	EmptyInconclusive OnEmpty = "inconclusive" // the default
	EmptyFailed       OnEmpty = "failed"
	EmptySuccessful   OnEmpty = "successful"
)

// Verdict is the verdict of an empty result.
func (o OnEmpty) Verdict() Verdict { return Verdict(o) }

// Analysis is how an analysis measures and judges, whatever it measures: every Interval,
// Count times (a stage; a ring's analysis measures throughout its bake and once at its end,
// and has no Count); it fails once more than FailureLimit measurements failed, and cannot
// conclude once more than InconclusiveLimit were inconclusive.
type Analysis struct {
	Interval          time.Duration
	Count             int // 0 for a ring's analysis
	FailureLimit      int
	InconclusiveLimit int
	OnEmpty           OnEmpty
}

// AnalysisParams are the params ParseAnalysis reads; a kind that measures takes them beside
// its own.
var AnalysisParams = []string{"interval", "count", "failureLimit", "inconclusiveLimit", "onEmpty"}

// ErrInvalidAnalysis is matched by the *FieldError of ParseAnalysis.
var ErrInvalidAnalysis = errors.New("invalid analysis")

// ParseAnalysis reads an analysis' policy from params: interval (a duration, default 30s,
// from 1s to 1h), count (a stage's measurements, default 1, at most 1000 and 24 h of them
// end to end; a ring's analysis,
// ring true, has none: it measures throughout the bake), failureLimit and inconclusiveLimit
// (0 to 1000, default 0) and onEmpty ("inconclusive", "failed" or "successful"). Its errors
// are *FieldError values naming the param, matching ErrInvalidAnalysis.
func ParseAnalysis(params map[string]any, ring bool) (Analysis, error) {
	a := Analysis{Interval: DefaultAnalysisInterval, Count: 1, OnEmpty: EmptyInconclusive}
	bad := func(field, format string, args ...any) (Analysis, error) {
		return Analysis{}, &FieldError{Field: field, Reason: fmt.Sprintf(format, args...), Err: ErrInvalidAnalysis}
	}
	if raw, ok := params["interval"]; ok && raw != nil && raw != "" {
		s, _ := raw.(string)
		d, err := time.ParseDuration(s)
		if err != nil || d < MinAnalysisInterval || d > MaxAnalysisInterval {
			return bad("interval", "must be a duration such as \"30s\", from %s to %s", MinAnalysisInterval, MaxAnalysisInterval)
		}
		a.Interval = d
	}
	var err error
	if ring {
		a.Count = 0
		if _, ok := params["count"]; ok {
			return bad("count", "a ring's analysis measures every interval throughout the bake and once at its end: it has no count")
		}
	} else if a.Count, err = whole(params, "count", 1, 1, MaxAnalysisCount); err != nil {
		return bad("count", "%v", err)
	} else if time.Duration(a.Count-1)*a.Interval > MaxAnalysisSpan {
		return bad("count", "%d measurements every %s take longer than %s", a.Count, a.Interval, MaxAnalysisSpan)
	}
	if a.FailureLimit, err = whole(params, "failureLimit", 0, 0, MaxAnalysisLimit); err != nil {
		return bad("failureLimit", "%v", err)
	}
	if a.InconclusiveLimit, err = whole(params, "inconclusiveLimit", 0, 0, MaxAnalysisLimit); err != nil {
		return bad("inconclusiveLimit", "%v", err)
	}
	if raw, ok := params["onEmpty"]; ok && raw != nil && raw != "" {
		s, _ := raw.(string)
		switch o := OnEmpty(s); o {
		case EmptyInconclusive, EmptyFailed, EmptySuccessful:
			a.OnEmpty = o
		default:
			return bad("onEmpty", "must be %q, %q or %q", EmptyInconclusive, EmptyFailed, EmptySuccessful)
		}
	}
	return a, nil
}

// whole reads params[name], a whole number in [least, most], def when absent. A number
// decoded from JSON is a float64, from YAML an int; a string holding one (what a template
// renders) is read too.
func whole(params map[string]any, name string, def, least, most int) (int, error) {
	raw, ok := params[name]
	if !ok || raw == nil {
		return def, nil
	}
	n, ok := 0, false
	switch v := raw.(type) {
	case int:
		n, ok = v, true
	case int64:
		n, ok = int(v), v == int64(int(v))
	case float64:
		n, ok = int(v), v == math.Trunc(v) && math.Abs(v) < 1e9
	case string:
		i, err := strconv.Atoi(strings.TrimSpace(v))
		n, ok = i, err == nil
	}
	if !ok || n < least || n > most {
		return 0, fmt.Errorf("must be a whole number from %d to %d", least, most)
	}
	return n, nil
}

// Failing reports whether t has more failed measurements than the analysis tolerates.
func (a Analysis) Failing(t Tally) bool { return t.Failed > a.FailureLimit }

// Inconclusive reports whether t has more inconclusive measurements than it tolerates.
func (a Analysis) Inconclusive(t Tally) bool { return t.Inconclusive > a.InconclusiveLimit }

// Judgement says where t leaves the analysis, for SREs: "2 of 3 measurements failed (failureLimit 1)".
func (a Analysis) Judgement(t Tally) string {
	switch {
	case a.Failing(t):
		return fmt.Sprintf("%d of %d measurements failed (failureLimit %d)", t.Failed, t.Total(), a.FailureLimit)
	case a.Inconclusive(t):
		return fmt.Sprintf("%d of %d measurements inconclusive (inconclusiveLimit %d)", t.Inconclusive, t.Total(), a.InconclusiveLimit)
	}
	return fmt.Sprintf("%d of %d measurements successful", t.Successful, t.Total())
}
