package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/executor-dev/executor/events"
)

// DefaultEventHeartbeat is how often GET /v1/events writes a comment line when no event
// comes, so proxies and clients see the stream alive.
const DefaultEventHeartbeat = 15 * time.Second

// eventRetryMs is the reconnection delay the stream asks EventSource clients to use.
const eventRetryMs = 2000

// streamEvents is GET /v1/events?plan=&tenant=: server-sent events of plan, task and stage
// transitions, resumed after the Last-Event-ID header (or ?lastEventId=); at most
// Options.MaxEventStreams open at once, MaxEventStreamsPerClient per client (429 beyond).
func (h *handlers) streamEvents(w http.ResponseWriter, r *http.Request) {
	release, refused := h.streams.take(clientOf(r))
	if refused != nil {
		h.writeError(w, r, refused)
		return
	}
	defer release()
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = r.URL.Query().Get("lastEventId")
	}
	watch, err := h.svc.WatchEvents(r.Context(), r.URL.Query().Get("plan"), r.URL.Query().Get("tenant"), last)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	defer watch.Close()
	flusher, ok := w.(http.Flusher)
	if !ok {
		h.writeError(w, r, fmt.Errorf("api: the response writer cannot stream"))
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprintf(w, "retry: %d\n\n", eventRetryMs); err != nil {
		return
	}
	if watch.Gap() {
		// Events after the client's last one were dropped from the ring: it should reload.
		if _, err := fmt.Fprint(w, "event: gap\ndata: {}\n\n"); err != nil {
			return
		}
	}
	for {
		page, err := watch.Replay(r.Context())
		if err != nil { // the source went away: the client reconnects with its Last-Event-ID
			h.opts.Logger.Warn("events: replay failed", "err", err)
			return
		}
		if len(page) == 0 {
			break
		}
		for _, e := range page {
			if writeEvent(w, e) != nil {
				return
			}
		}
		flusher.Flush()
	}
	flusher.Flush()
	beat := time.NewTicker(h.opts.EventHeartbeat)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-beat.C:
			if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil {
				return
			}
		case e, open := <-watch.Live():
			if !open { // it fell behind, or Redis went away: the client reconnects with its Last-Event-ID
				return
			}
			if !watch.Fresh(e) { // replayed already
				continue
			}
			if writeEvent(w, e) != nil {
				return
			}
		}
		flusher.Flush()
	}
}

// writeEvent writes e as one server-sent event: its entry ID, its kind as the event name,
// and its wire.Event as data (whose id is the entry ID too).
func writeEvent(w http.ResponseWriter, e events.Entry) error {
	b, err := json.Marshal(events.ToWire(e.ID, e.Event))
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "id: %s\nevent: %s\ndata: %s\n\n", e.ID, e.Event.Kind, b)
	return err
}
