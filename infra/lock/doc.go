// Package lock implements tenant leases (docs/design.md §5, §6) with three lockers that share one
// contract, Acquire(ctx, tenantID, owner) (lease.Lease, error) and Holder(ctx, tenantID):
//
//   - Memory is in-process: the embedded default, and the fallback while Redis is away. Its
//     leases never expire and are lost only to ForceRelease; they end on Release.
//   - Redis keeps one key per tenant, executor:lock:tenant:{<tenantId>}, with bsm/redislock:
//     the value is a random token followed by the owner (<planId>:<taskId>), and the key
//     expires after the lease TTL unless refreshed. Each lease refreshes itself every TTL/3
//     and is lost (Lost closes) when the key is gone or taken, or when no refresh has
//     succeeded for a whole TTL.
//   - Failover is the locker of degraded mode: every lease is an in-process lease (so two
//     runs of one process never share a tenant) plus, whenever Redis lets it, the same Redis
//     key as the Redis locker's. Redis errors that mean an outage are reported to an
//     outage.Monitor and never lose a lease: a lease taken while Redis is away runs on memory
//     alone, and its watchdog (every TTL/3; TTL/10 for a self-fencing lease) takes the Redis key as soon as Redis answers; a
//     held key that vanished (an emptied, restarted Redis) is re-taken with the same value.
//     A lease is lost only when Redis answers that another run holds the tenant, or that the
//     lease was force-released.
//
// In all three, a tenant held by another run gives an error wrapping lease.ErrHeld, and
// ForceRelease(ctx, tenantID) is an operator's unlock: it removes the lease whoever holds it
// and returns the holder removed. An in-process holder (Memory, and Failover's own leases)
// is lost at once; a Redis lease at its next refresh. Deleting a Redis key, it leaves a
// tombstone, executor:lock:released:{<tenantId>}, holding the value removed for a few lease
// TTLs (at least MinTombstoneTTL): a Failover lease of another process that finds its key
// gone looks for it in the same script that would take the key back, and is lost instead,
// so the unlock sticks across processes. The tombstone stops no new lease, and a lease with
// another value ignores it; only an emptied Redis (no tombstone) gets a key taken back.
//
// The three run one contract suite, infra/lock/locktest: what the orchestrator's Locker port
// and the lease contract ask of every locker.
package lock
