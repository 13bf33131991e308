// Package stage defines what a stage is and how it runs, independent of any kind.
//
// A Spec is one entry of a plan's stage template: a name unique within the plan, a kind, params
// whose string values are text/template templates, an optional timeout and a retry Policy.
// A Handler runs one attempt of a stage kind and reports failure as an *Error carrying a Class.
//
// A Renderer renders params for one tenant and attempt. It is strict: a template that reads a
// missing key or a null, or prints nothing, is an error (ErrNoValue), never "<no value>"; what
// a template inserts into a param its kind declares a URL (URLParamer) is escaped for where it
// lands in the URL. A Redactor records the secrets a render read and hides their values in
// what is left behind.
//
// An Analysis is how a kind that measures (the prometheus kind) measures and judges, whatever
// it measures: its interval, count and limits (ParseAnalysis), each Measurement's Verdict, and
// the Tally of verdicts it judges.
//
// Invariants:
//   - a Spec's name matches NamePattern and its kind is non-empty; timeout is never negative;
//   - a Policy always allows at least one attempt and never backs off for longer than MaxBackoff,
//     except that a Retry-After hint from the failure wins;
//   - every failure has exactly one Class; errors that carry none are retryable;
//   - an Analysis measures at least once, every 1 s to 1 h, a stage's measurements spanning at
//     most 24 h; a Measurement's texts are at most MaxMeasurementText bytes once Bounded.
//
// The package imports only the standard library.
package stage
