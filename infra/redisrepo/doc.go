// Package redisrepo implements the plan, task and checkpoint repositories on Redis (docs/design.md §5),
// write-through with an in-memory mirror (infra/memrepo): writes go to Redis and, once Redis
// accepted them, to the mirror. Reads go to Redis first, so executors sharing one Redis answer
// alike and a fresh process answers every query with no start-up scan; the mirror keeps the
// plans' immutable stage templates and is what degraded mode runs on. It is bounded
// (Options.CacheTasks): it keeps the tasks and plans this executor accepted or runs that have
// not ended and everything journaled, and caches a bounded number of the rest.
//
// Every write of a run (a task and its checkpoint) is one round trip: the fenced
// save_task.lua script. Nothing of an active plan expires; a plan's end gives its keys the
// retention (retention.go). Plan creation claims every tenant with SET NX first, so two
// executors can never both give a tenant a new task, and no executor claims one for a lease
// TTL after Redis lost its data (generation.go). What stage attempts printed is kept beside
// the tasks, best effort and never mirrored nor journaled (transcripts.go). Every key comes
// from infra/rediskey; every Lua script is embedded from scripts/ and headed by its KEYS,
// ARGV and return values.
package redisrepo
