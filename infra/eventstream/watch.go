package eventstream

import (
	"context"
	"fmt"

	"github.com/executor-dev/executor/events"
)

// Watch starts a watch of the stream's matching entries: with lastEventID "", those read
// from now on; else first those after it (a stream entry ID, or events.ErrBadID), paged with
// XRANGE, with Gap when the stream no longer holds the entry after it (trimmed, or Redis lost
// it). While the stream cannot be read (Redis away, or not read yet), the watch gets this
// executor's own events live instead, with Gap when it asked to resume, and it is ended once
// the stream is read again.
func (r *Reader) Watch(ctx context.Context, f events.Filter, lastEventID string) (*events.Watch, error) {
	if lastEventID != "" {
		if _, _, _, err := events.ParseID(lastEventID); err != nil {
			return nil, fmt.Errorf("eventstream: Last-Event-ID: %w", err)
		}
	}
	r.mu.Lock()
	parked := r.parked && !r.stopped
	if !parked && !r.up {
		defer r.mu.Unlock()
		return r.localWatch(f, lastEventID != ""), nil
	}
	live := r.fan.Subscribe(f)
	r.mu.Unlock()
	if parked && !r.unpark(ctx) {
		live.Close()
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.localWatch(f, lastEventID != ""), nil
	}
	if lastEventID == "" {
		return events.NewWatch(live, f, false, "", nil), nil
	}
	gap, err := r.gap(ctx, lastEventID)
	if err != nil {
		live.Close()
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.localWatch(f, true), nil
	}
	return events.NewWatch(live, f, gap, lastEventID, r.page), nil
}

// unpark wakes the parked goroutine positioned at the stream's end, read now: the watch,
// subscribed before, gets every entry written after that. It reports whether the stream is
// read; when its end cannot be read the goroutine is woken unpositioned (it positions itself,
// with backoff while Redis is away) and the watch is to get local events until then. Two
// watches may race to unpark: the first wakes the goroutine, the second finds it reading.
func (r *Reader) unpark(ctx context.Context) bool {
	last, err := r.tail(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.parked || r.stopped {
		return r.up
	}
	r.parked = false
	if err != nil {
		r.up = false
	}
	r.wake <- position{last: last, known: err == nil}
	return r.up
}

// localWatch is a watch of this executor's own events, ended when the stream is read again;
// r.mu is held.
func (r *Reader) localWatch(f events.Filter, gap bool) *events.Watch {
	sub := r.local.Subscribe(f)
	if r.stopped {
		sub.Close()
	} else {
		r.fallback[sub] = struct{}{}
	}
	w := events.NewWatch(sub, f, gap, "", nil)
	w.OnClose(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.fallback, sub)
	})
	return w
}

// gap reports whether events after the event after may be missing from the stream: its
// first entry is newer than the entry that held after (older ones were trimmed), or it is
// empty (Redis lost it).
func (r *Reader) gap(ctx context.Context, after string) (bool, error) {
	msgs, err := r.client.XRangeN(ctx, r.key, "-", "+", 1).Result()
	if err != nil {
		return false, fmt.Errorf("eventstream: xrange: %w", err)
	}
	if len(msgs) == 0 {
		return true, nil
	}
	return events.CompareIDs(msgs[0].ID, events.StreamEntryID(after)) > 0, nil
}

// page reads the events after the event after (an events.Pager), up to events.ReplayPage
// entries at a time, from the entry that holds it on.
func (r *Reader) page(ctx context.Context, after string) ([]events.Entry, string, error) {
	msgs, err := r.client.XRangeN(ctx, r.key, events.StreamEntryID(after), "+", events.ReplayPage).Result()
	if err != nil {
		return nil, "", fmt.Errorf("eventstream: xrange: %w", err)
	}
	var out []events.Entry
	next := after
	for _, m := range msgs {
		for _, e := range r.decode(m) {
			if events.CompareIDs(e.ID, after) > 0 {
				out = append(out, e)
			}
			next = e.ID
		}
	}
	if events.CompareIDs(next, after) <= 0 {
		return nil, "", nil // nothing after it
	}
	return out, next, nil
}
