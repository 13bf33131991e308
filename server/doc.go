// Package server wires the executor together (stores, locker, stage kinds, orchestrator, use
// cases, HTTP API) and runs it. `executor serve` and the end-to-end tests use the same wiring.
package server
