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
		if _, _, err := events.ParseID(lastEventID); err != nil {
			return nil, fmt.Errorf("eventstream: Last-Event-ID: %w", err)
		}
	}
	r.mu.Lock()
	if !r.up {
		defer r.mu.Unlock()
		return r.localWatch(f, lastEventID != ""), nil
	}
	live := r.fan.Subscribe(f)
	r.mu.Unlock()
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

// gap reports whether entries after the entry after may be missing from the stream: its
// first entry is newer than after (older ones were trimmed), or it is empty (Redis lost it).
func (r *Reader) gap(ctx context.Context, after string) (bool, error) {
	msgs, err := r.client.XRangeN(ctx, r.key, "-", "+", 1).Result()
	if err != nil {
		return false, fmt.Errorf("eventstream: xrange: %w", err)
	}
	if len(msgs) == 0 {
		return true, nil
	}
	return events.CompareIDs(msgs[0].ID, after) > 0, nil
}

// page reads up to events.ReplayPage entries after the entry after (an events.Pager).
func (r *Reader) page(ctx context.Context, after string) ([]events.Entry, string, error) {
	msgs, err := r.client.XRangeN(ctx, r.key, "("+after, "+", events.ReplayPage).Result()
	if err != nil {
		return nil, "", fmt.Errorf("eventstream: xrange: %w", err)
	}
	if len(msgs) == 0 {
		return nil, "", nil
	}
	out := make([]events.Entry, 0, len(msgs))
	for _, m := range msgs {
		if e, ok := r.decode(m); ok {
			out = append(out, events.Entry{ID: m.ID, Event: e})
		}
	}
	return out, msgs[len(msgs)-1].ID, nil
}
