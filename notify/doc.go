// Package notify delivers what plans notify of (plan.Notice) to their destinations
// (plan.Destination): at least once, from the outbox that the plan itself is (a notice is
// written with the transition it tells of, in the plan's own compare-and-set), by whichever
// executor finds it undelivered, each delivery claimed so that executors do not send it at the
// same time, retried with backoff, with a stable event id a receiver de-duplicates by.
//
// A Deliverer polls the plans that may have undelivered notices (Deliveries.Pending), claims
// each (notice, destination) due, sends it through the http stage kind (its SSRF guard and
// allow-list apply), and records the outcome. Bodies are digests: counts of the plan's tasks by
// status and a few samples of failures, read when the notice is sent, never one message per
// tenant.
package notify
