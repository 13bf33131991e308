// Package lock implements tenant leases (DESIGN §5) with two lockers that share one contract,
// Acquire(ctx, tenantID, owner) (lease.Lease, error) and Holder(ctx, tenantID):
//
//   - Memory is in-process: the embedded default, and the fallback while Redis is away. Its
//     leases never expire and are never lost; they end on Release.
//   - Redis keeps one key per tenant, executor:lock:tenant:{<tenantId>}, with bsm/redislock:
//     the value is a random token followed by the owner (<planId>:<taskId>), and the key
//     expires after the lease TTL unless refreshed. Each lease refreshes itself every TTL/3
//     and is lost (Lost closes) when the key is gone or taken, or when no refresh has
//     succeeded for a whole TTL.
//
// In both, a tenant held by another run gives an error wrapping lease.ErrHeld.
package lock
