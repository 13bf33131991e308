// Package eventstream is the optional Redis Stream sink of the executor's events (issue 6),
// off by default: a Stream is an event.Publisher that appends every event it takes to one
// Redis Stream, executor:events (rediskey.Keys.Events), for subscribers outside the process
// (XREAD BLOCK, consumer groups; docs/redis.md).
//
// Invariants:
//
//   - Publish never blocks and never waits on Redis: it puts the event on a bounded buffer
//     (Options.Buffer) or, when the buffer is full or the Stream is stopped, drops it and
//     counts it (Dropped). The sink can never slow the executor nor grow without bound.
//   - One goroutine, between Start and Stop, writes the buffered events in publish order, in
//     pipelined batches of XADD <key> MAXLEN ~ <MaxLen> * event <JSON of event.Event>; the
//     stream is capped (approximately: Redis trims whole nodes) at Options.MaxLen entries.
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
