// Package members is the registry of the executors sharing one store: who is there, where it
// serves, since when, how many tasks it runs, and whether it is alive.
//
// On Redis (Redis) every executor registers itself when it starts and keeps a liveness key
// with a TTL (the lease TTL) that a background loop refreshes every TTL/3:
//
//   - <prefix>executors, a HASH: one field per executor name, its registration as JSON
//     (name, address, startedAt, version, and the heartbeatAt and runs of its last refresh);
//   - <prefix>executor:{<name>}, a string: {heartbeatAt, runs, instance} as JSON, with the TTL.
//
// Invariants:
//
//   - An executor is alive exactly while its liveness key exists. Aliveness never depends
//     on clocks: a key expires in Redis, by Redis's clock. heartbeatAt is the writer's clock,
//     for people to read.
//   - One name, one live executor: Start takes the liveness key with SET NX and refuses
//     (ErrNameInUse) while another executor's key is there; a name whose key expired may be
//     taken again. Each process writes a random instance token into its key, and the refresh
//     (beat.lua) and the clean stop (leave.lua) only touch a key holding their own token, so
//     a process that was frozen past its TTL never overwrites the executor that took its name
//     meanwhile.
//   - Every key is a single-key command or script: Redis Cluster safe. The liveness key's hash
//     tag is the executor's name.
//   - Stop deletes the liveness key and the HASH entry (a clean stop). A process that dies
//     leaves its entry, shown as not alive, until List prunes it: an entry whose liveness key
//     is gone and whose last heartbeat is older than PruneAfter (1 hour by default).
//   - Redis errors leave the package wrapped, prefixed "members: "; redis.Nil never does.
//     While Redis is away the loop logs once per outage and keeps trying; when Redis answers
//     again (even empty, after a restart) the next refresh registers the executor again.
//
// Memory is the registry of an executor on the embedded in-memory store: one process, so it
// lists itself alone.
package members
