package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
)

// UnmatchedRoute is the route a request no route matched (a 404 or 405 answer) is observed
// under, so that raw paths never become metric labels.
const UnmatchedRoute = "unmatched"

// quietRoutes are the GET routes of probes and scrapes: they are measured but not written to
// the access log, which they would flood.
var quietRoutes = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// observation is what the observe middleware learns from the handlers of one request.
type observation struct {
	unmatched bool // no route matched: the answer is a 404 or 405
}

type observationKey struct{}

// unmatched wraps the handler of requests no route matched (NotFound, MethodNotAllowed), so
// that observe labels them UnmatchedRoute.
func unmatched(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if o, ok := r.Context().Value(observationKey{}).(*observation); ok {
			o.unmatched = true
		}
		next(w, r)
	}
}

// observe measures every request (status code, duration, route pattern) for
// Options.ObserveRequest and writes one access-log record per request at Info, except for
// GET probes and scrapes (quietRoutes). The record holds no header, query string or body:
// they may carry tokens. A long-lived response (GET /v1/events) is logged when it ends.
func (h *handlers) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ow := &observedWriter{ResponseWriter: w}
		o := &observation{}
		r = r.WithContext(context.WithValue(r.Context(), observationKey{}, o))
		returned := false
		defer func() {
			code := ow.code
			switch {
			case code == 0 && !returned:
				code = http.StatusInternalServerError // it panicked before answering: recoverer answers 500
			case code == 0:
				code = http.StatusOK
			}
			h.record(r, o, ow, code, time.Since(start))
		}()
		next.ServeHTTP(ow, r)
		returned = true
	})
}

// record reports one request to Options.ObserveRequest and the access log.
func (h *handlers) record(r *http.Request, o *observation, ow *observedWriter, code int, d time.Duration) {
	route := chi.RouteContext(r.Context()).RoutePattern() // read after the handler ran: the full pattern
	if o.unmatched || route == "" {
		route = UnmatchedRoute
	}
	if f := h.opts.ObserveRequest; f != nil {
		f(route, methodLabel(r.Method), code, d)
	}
	if (r.Method == http.MethodGet || r.Method == http.MethodHead) && quietRoutes[route] {
		return
	}
	h.opts.Logger.LogAttrs(r.Context(), slog.LevelInfo, "http request",
		slog.String("request_id", requestIDOf(r)),
		slog.String("method", r.Method),
		slog.String("route", route),
		slog.String("path", r.URL.Path), // never RawQuery: a query may carry a token
		slog.Int("status", code),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000),
		slog.Int64("bytes", ow.bytes),
	)
}

// methodLabel bounds the method label: a client can send any token as a method.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}

// observedWriter records the response's status code and body size. It unwraps for
// http.ResponseController and passes flushes through (GET /v1/events keeps streaming).
type observedWriter struct {
	http.ResponseWriter
	code  int   // the final status sent; 0 until the response started
	bytes int64 // body bytes written
}

// WriteHeader records the status (not an informational 1xx one) and sends it.
func (w *observedWriter) WriteHeader(code int) {
	if w.code == 0 && code >= 200 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write writes b (a 200 response when no status was sent) and counts it.
func (w *observedWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Flush sends buffered data to the client (a 200 response when no status was sent).
func (w *observedWriter) Flush() {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (w *observedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
