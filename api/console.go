package api

import "net/http"

// console serves the web console through c, answering the paths it does not have (an unknown
// /assets/ file) with the API's own 404 problem rather than c's plain-text one.
func (h *handlers) console(c http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		cw := &notFoundCatcher{ResponseWriter: w}
		c.ServeHTTP(cw, r)
		if cw.caught {
			h.notFound(w, r)
		}
	}
}

// notFoundCatcher swallows a 404 and its body, so that the caller can answer it instead.
type notFoundCatcher struct {
	http.ResponseWriter
	caught bool
}

// WriteHeader passes code on, unless it is a 404.
func (w *notFoundCatcher) WriteHeader(code int) {
	if code == http.StatusNotFound {
		w.caught = true
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write passes b on, unless a 404 was swallowed.
func (w *notFoundCatcher) Write(b []byte) (int, error) {
	if w.caught {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (w *notFoundCatcher) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush sends buffered data to the client (the console's responses stream like any other).
func (w *notFoundCatcher) Flush() {
	if !w.caught {
		_ = http.NewResponseController(w.ResponseWriter).Flush()
	}
}
