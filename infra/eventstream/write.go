package eventstream

import (
	"encoding/json"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/event"
)

// run writes the buffered events, in batches, until Stop closes the buffer and it is empty.
func (s *Stream) run() {
	defer close(s.done)
	w := writer{s: s}
	batch := make([]event.Event, 0, batchSize)
	for e := range s.events {
		batch = append(batch[:0], e)
	fill:
		for len(batch) < batchSize {
			select {
			case next, ok := <-s.events:
				if !ok {
					break fill
				}
				batch = append(batch, next)
			default:
				break fill
			}
		}
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
}

// write sends one pipeline of XADDs; the events it could not write are dropped and counted.
// Once Stop's context has ended it only counts them.
func (w *writer) write(batch []event.Event) {
	s := w.s
	if s.ctx.Err() != nil {
		s.dropped.Add(uint64(len(batch)))
		return
	}
	pipe := s.client.Pipeline()
	lost := 0
	for _, e := range batch {
		data, err := json.Marshal(e)
		if err != nil {
			lost++
			s.log.Warn("event stream: event not encoded", "err", err, "kind", e.Kind, "plan", e.PlanID)
			continue
		}
		pipe.XAdd(s.ctx, &redis.XAddArgs{
			Stream: s.key, MaxLen: s.maxLen, Approx: true, Values: []any{Field, data},
		})
	}
	cmds, err := pipe.Exec(s.ctx)
	var firstErr error
	for _, c := range cmds {
		if c.Err() != nil {
			lost++
			if firstErr == nil {
				firstErr = c.Err()
			}
		}
	}
	if firstErr == nil && err != nil {
		firstErr = err
	}
	s.dropped.Add(uint64(lost))
	if s.ctx.Err() != nil {
		return // Stop gave up: a cancelled write is no outage
	}
	switch {
	case firstErr != nil && !w.failing:
		w.failing = true
		s.log.Warn("event stream: redis write failed; events are dropped until it succeeds",
			"err", firstErr, "dropped", lost)
	case firstErr == nil && w.failing:
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
