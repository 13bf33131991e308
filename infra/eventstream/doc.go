// Package eventstream is the cluster's events on Redis: every executor writes its events to
// one Redis Stream, executor:events (rediskey.Keys.Events), and serves GET /v1/events from it
// (docs/redis.md).
//
// A Stream is the sink, an event.Publisher that appends every event it takes to the stream,
// the events it writes together in one entry (a JSON array in field FieldBatch). A Reader is
// the process's one reader: a goroutine, between Start and Stop, that reads the stream with
// XREAD BLOCK from the last entry it saw while a watch is on the stream (parked, reading
// nothing, while none is) and hands the events to the watches of the process
// (events.Fanout), each with its entry ID ("<ms>-<seq>" for an entry's first event,
// "<ms>-<seq>-<k>" for its k-th); Watch replays the events after a Last-Event-ID with paged
// XRANGE first. While the stream cannot be read, watches get the executor's own events
// (ReaderOptions.Local), and they are ended once it can be read again; watches on the stream
// are ended when a read fails. Stop unblocks the read with CLIENT UNBLOCK and waits for the
// goroutine (bounded by its context); every watch then ends. The Reader never closes the
// client.
//
// The sink's invariants:
//
//   - Publish never blocks and never waits on Redis: it puts the event on a bounded buffer
//     (Options.Buffer) or, when the buffer is full or the Stream is stopped, drops it and
//     counts it (Dropped). The sink can never slow the executor nor grow without bound.
//   - One goroutine, between Start and Stop, writes the buffered events in publish order, in
//     batches of up to 64 (a batch is sent when full, or 5 ms after its first event), each
//     one entry: XADD <key> MAXLEN ⌈MaxLen/n⌉ * events <JSON array of the n events>. Under
//     load one XADD carries the events of many transitions. The stream keeps about the latest
//     Options.MaxLen events: after an entry of n events it holds ⌈MaxLen/n⌉ entries.
//   - A failed write is not retried by the sink (the client may, per its own MaxRetries): its
//     events are dropped and counted, and the goroutine goes on with the next batch. Outages
//     are logged once (Warn when writes start failing, Info when they succeed again), and so
//     are buffer overflows (once per burst).
//   - Stop stops taking events, writes what is pending and waits for the goroutine, until its
//     context ends: then what is still pending is dropped and counted, and the goroutine
//     returns once the pipeline in flight does (the client's timeouts bound it). Stop twice,
//     Start after Stop and Publish after Stop are safe; Start twice starts one goroutine.
//   - The Stream never closes the client.
package eventstream
