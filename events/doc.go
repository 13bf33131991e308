// Package events is what GET /v1/events serves, whatever the store: Entry (an event with the
// ID a watcher resumes after), ToWire and FromWire (an event's JSON form, wire.Event, and
// back), Fanout (hands entries to filtered subscriptions), Watch (a watcher's gap, replay and
// live part), and the in-memory Hub. The Hub numbers every
// published event.Event, keeps the latest ones in a bounded ring (so a watcher that
// reconnects with Last-Event-ID misses nothing the ring still holds), passes them on (to the
// Redis sink) and fans them out. On Redis, infra/eventstream's Reader serves the cluster's
// stream with the same Fanout and Watch.
//
// Invariants: hub event IDs start at 1 and grow by one per published event; the ring holds at
// most its size of the latest events, in ID order; a watch without Last-Event-ID gets live
// entries only; a watch's live subscription opens before its replay, and entries not newer
// than the last replayed one are not Fresh, so nothing is missed or sent twice; Publish never
// blocks: a subscriber that does not keep up is closed (Overflowed), and its client resumes
// from its last event ID; a subscriber's channel is closed exactly once.
package events
