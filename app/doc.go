// Package app holds the executor's use cases: submitting a plan (validation, rendering every
// tenant's stages, conflict checks, idempotency), querying plans, tasks and tenants, and
// operator control (pause, resume, cancel, retry), on top of the domain repositories and the
// orchestrator. Transport layers (HTTP, CLI) call only this package.
package app
