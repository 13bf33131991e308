package eventstream

import (
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/event"
)

// run writes the buffered events, in batches, until Stop closes the buffer and it is empty.
// A batch is sent when it is full, or linger after its first event: under load the events
// of many transitions share one round trip instead of one each.
func (s *Stream) run() {
	defer close(s.done)
	w := writer{s: s}
	batch := make([]event.Event, 0, batchSize)
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	for e := range s.events {
		batch = append(batch[:0], e)
		linger.Reset(lingerFor)
	fill:
		for len(batch) < batchSize {
			select {
			case next, ok := <-s.events:
				if !ok {
					break fill
				}
				batch = append(batch, next)
			case <-linger.C:
				break fill
			}
		}
		linger.Stop()
		w.write(batch)
		w.noteOverflow()
	}
}

// writer is the state of the goroutine that writes: what it last logged.
type writer struct {
	s        *Stream
	failing  bool   // the last write failed (an outage was logged)
	seen     uint64 // Stream.overflow when last looked at
	bursting bool   // the buffer overflowed since the previous batch (a burst was logged)
	buf      []byte // the last batch's encoding, reused
}

// write appends batch to the stream as one entry (one XADD, the events as a JSON array),
// trimming the stream to about maxLen events: ⌈maxLen/len(batch)⌉ entries of this size.
// Events it could not write are dropped and counted. Once Stop's context has ended it only
// counts them.
func (w *writer) write(batch []event.Event) {
	s := w.s
	if s.ctx.Err() != nil {
		s.dropped.Add(uint64(len(batch)))
		return
	}
	w.buf = appendEvents(w.buf[:0], batch) // XAdd returns after the reply: the next batch may reuse it
	entries := (s.maxLen + int64(len(batch)) - 1) / int64(len(batch))
	err := s.client.XAdd(s.ctx, &redis.XAddArgs{Stream: s.key, MaxLen: entries, Values: []any{FieldBatch, w.buf}}).Err()
	lost := 0
	if err != nil {
		lost = len(batch)
	}
	s.dropped.Add(uint64(lost))
	if s.ctx.Err() != nil {
		return // Stop gave up: a cancelled write is no outage
	}
	switch {
	case err != nil && !w.failing:
		w.failing = true
		s.log.Warn("event stream: redis write failed; events are dropped until it succeeds",
			"err", err, "dropped", lost)
	case err == nil && w.failing:
		w.failing = false
		s.log.Info("event stream: redis writes succeed again", "droppedSoFar", s.dropped.Load())
	}
}

// noteOverflow logs, once per burst, that the buffer overflowed: a burst starts when a batch
// finds new overflows and ends at the first batch that finds none. Overflows during an
// outage are not logged apart.
func (w *writer) noteOverflow() {
	n := w.s.overflow.Load()
	grew := n > w.seen
	w.seen = n
	switch {
	case grew && !w.bursting:
		w.bursting = true
		if !w.failing {
			w.s.log.Warn("event stream: buffer full; events are dropped",
				"buffer", cap(w.s.events), "droppedSoFar", w.s.dropped.Load())
		}
	case !grew && w.bursting:
		w.bursting = false
	}
}
