package api

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"runtime/debug"

	"github.com/oklog/ulid/v2"
)

// RequestIDHeader carries the request's id on every response (and, when the caller sends a
// well-formed one, on the request).
const RequestIDHeader = "X-Request-Id"

// requestIDPattern is what a caller-supplied request id must match to be kept; anything else
// is replaced by a fresh ULID, so the id is always safe to log.
var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

type requestIDKey struct{}

// requestIDOf returns the id the requestID middleware gave r.
func requestIDOf(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey{}).(string)
	return id
}

// requestID gives every request an id (the caller's X-Request-Id when well-formed, else a new
// ULID), sets it on the response and puts it in the request context for logs.
func (h *handlers) requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !requestIDPattern.MatchString(id) {
			id = ulid.Make().String()
		}
		w.Header().Set(RequestIDHeader, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

// recoverer turns a panicking handler into a logged 500 problem (when nothing was written yet).
// http.ErrAbortHandler keeps its meaning: it is re-raised.
func (h *handlers) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			rec := recover()
			if rec == nil {
				return
			}
			if rec == http.ErrAbortHandler {
				panic(rec)
			}
			err := fmt.Errorf("%w: %v\n%s", errPanic, rec, debug.Stack())
			if sw.wrote {
				h.opts.Logger.Error("http handler panicked after writing its response",
					"request_id", requestIDOf(r), "method", r.Method, "path", r.URL.Path, "err", err)
				return
			}
			h.writeError(sw, r, err)
		}()
		next.ServeHTTP(sw, r)
	})
}

// statusWriter records whether the response was started. It unwraps for
// http.ResponseController and passes flushes through (streaming responses keep working).
type statusWriter struct {
	http.ResponseWriter
	wrote bool
}

// WriteHeader records that the response started and sends the status.
func (w *statusWriter) WriteHeader(code int) {
	if code >= 200 { // 1xx responses are informational: the real one is still to come
		w.wrote = true
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write records that the response started and writes b.
func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Flush sends buffered data to the client.
func (w *statusWriter) Flush() {
	w.wrote = true
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
