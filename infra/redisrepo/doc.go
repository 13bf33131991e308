// Package redisrepo implements the plan, task and checkpoint repositories on Redis (DESIGN §5),
// write-through with an in-memory mirror (infra/memrepo): writes go to Redis and, once Redis
// accepted them, to the mirror; reads hit the mirror first and Redis on a miss, so a fresh
// process answers every query from Redis with no start-up scan.
//
// Every write of a run (a task and its checkpoint) is one round trip: the fenced
// save_task.lua script, pipelined with the TTL refresh of the task's plan and tenant index.
// Every key comes from infra/rediskey; every Lua script is embedded from scripts/.
package redisrepo
