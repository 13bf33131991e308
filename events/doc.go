// Package events is the executor's in-memory event hub: it numbers every published
// event.Event, keeps the latest ones in a bounded ring (so a watcher that reconnects with
// Last-Event-ID misses nothing the ring still holds) and fans them out to subscribers, each
// with its filter.
//
// Invariants: event IDs start at 1 and grow by one per published event; the ring holds at
// most its size of the latest events, in ID order; Publish never blocks: a subscriber that
// does not keep up is closed (Overflowed reports it), and its client resumes from its last
// event ID; a subscriber's channel is closed exactly once.
package events
