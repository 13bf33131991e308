// Package lock implements tenant leases: an in-process locker (the embedded default, and the
// fallback while Redis is away) and, later, Redis leases with bsm/redislock.
package lock
