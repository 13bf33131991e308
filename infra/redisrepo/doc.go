// Package redisrepo implements the plan, task and checkpoint repositories on Redis (DESIGN §5),
// write-through with an in-memory mirror (infra/memrepo): writes go to Redis and, once Redis
// accepted them, to the mirror. Reads go to Redis first, so executors sharing one Redis answer
// alike and a fresh process answers every query with no start-up scan; the mirror keeps the
// plans' immutable stage templates and is what degraded mode will run on.
//
// Every write of a run (a task and its checkpoint) is one round trip: the fenced
// save_task.lua script, pipelined with the TTL refresh of the task's plan, tenant index and
// tenant claim. Plan creation claims every tenant with SET NX first, so two executors can
// never both give a tenant a new task. Every key comes from infra/rediskey; every Lua script
// is embedded from scripts/ and headed by its KEYS, ARGV and return values.
package redisrepo
