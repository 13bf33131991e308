// Package metrics is the executor's Prometheus exposition (GET /metrics, docs/metrics.md): a
// Registry of its own (never the global default registry) holding the Go and process
// collectors and every executor_* metric.
//
// The Registry implements the orchestrator's Metrics hooks (stage attempts, retries, fenced
// writes, lease contention and losses) and provides the api's ObserveRequest; the gauges of
// plans and tasks by status, of degraded mode and of the journal are read at scrape time
// from the funcs in Options. It imports only the domain packages: server wires it.
package metrics
