package openapitest

import (
	"bytes"
	"net/http"
)

// recorder passes an answer through while keeping its status and (up to maxChecked) body.
// It flushes and unwraps like the writer it wraps, so event streams stream through it.
type recorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	body        bytes.Buffer
	wrote       int
	overflow    bool
}

// WriteHeader records the status.
func (r *recorder) WriteHeader(status int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = status, true
	}
	r.ResponseWriter.WriteHeader(status)
}

// Write keeps p, within maxChecked, and writes it.
func (r *recorder) Write(p []byte) (int, error) {
	r.wroteHeader = true
	r.wrote += len(p)
	if !r.overflow && r.body.Len()+len(p) <= maxChecked {
		r.body.Write(p)
	} else {
		r.overflow = true
		r.body.Reset()
	}
	return r.ResponseWriter.Write(p)
}

// Flush flushes the writer underneath, if it can.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
