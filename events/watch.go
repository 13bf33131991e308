package events

import "context"

// ReplayPage is how many entries a replay reads at a time.
const ReplayPage = 500

// Pager reads the entries of a source after the ID after, oldest first, at most ReplayPage
// of them. next is the ID of the last entry read, kept or not (an entry that does not decode
// is skipped, not replayed), or "" when nothing is left after after.
type Pager func(ctx context.Context, after string) (page []Entry, next string, err error)

// Watch is one watcher's view of the events: Gap, then the replay of the entries after its
// Last-Event-ID (Replay, page by page), then the live ones (Live, keeping those Fresh).
//
// The live subscription is open before the replay starts, so nothing published meanwhile is
// missed; an entry both replayed and received live is dropped by Fresh (IDs only grow), so
// nothing is sent twice. Close it.
type Watch struct {
	// Gap tells that entries after the watcher's Last-Event-ID were dropped (trimmed, or
	// unreadable while Redis is away): it should reload the state.
	Gap bool

	live    *Subscription
	filter  Filter
	pager   Pager  // nil once the replay is done
	cursor  string // the last entry replayed, or the watcher's Last-Event-ID; "": none
	onClose func()
}

// NewWatch returns a watch of live, after the entry after ("": live entries only, no
// replay), replaying with pager (nil: nothing to replay) what matches f.
func NewWatch(live *Subscription, f Filter, gap bool, after string, pager Pager) *Watch {
	if after == "" {
		pager = nil
	}
	return &Watch{Gap: gap, live: live, filter: f, pager: pager, cursor: after}
}

// OnClose makes Close also call fn (once). Call it before handing the watch out.
func (w *Watch) OnClose(fn func()) { w.onClose = fn }

// Replay returns the next page of matching entries after the last one replayed; none once
// the replay is done. An error ends the watch: its watcher reconnects with its last ID.
func (w *Watch) Replay(ctx context.Context) ([]Entry, error) {
	for w.pager != nil {
		page, next, err := w.pager(ctx, w.cursor)
		if err != nil {
			return nil, err
		}
		if next == "" {
			w.pager = nil
			break
		}
		w.cursor = next
		out := page[:0:0]
		for _, e := range page {
			if w.filter.Match(e.Event) {
				out = append(out, e)
			}
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	return nil, nil
}

// Live delivers the entries published since the watch began; it is closed when the watch
// ends (Close, the watcher fell behind: Overflowed, or its source gave up: Redis away).
// Keep only those Fresh.
func (w *Watch) Live() <-chan Entry { return w.live.Events() }

// Fresh reports whether a live entry comes after everything replayed (false: a duplicate).
func (w *Watch) Fresh(e Entry) bool { return w.cursor == "" || CompareIDs(e.ID, w.cursor) > 0 }

// Overflowed reports whether the live part was closed because the watcher fell behind.
func (w *Watch) Overflowed() bool { return w.live.Overflowed() }

// Close ends the watch. Safe to call more than once.
func (w *Watch) Close() {
	w.live.Close()
	if fn := w.onClose; fn != nil {
		w.onClose = nil
		fn()
	}
}
