// Package lease defines a run's exclusive hold on a tenant.
//
// Invariants: at most one lease per tenant is held at a time; a lease that is lost (expired,
// taken over, or its store failed) closes its Lost channel, and the run holding it must stop.
package lease
