package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/executor-dev/executor/app"
)

// RetryAfterHeader tells a client refused with 429 (the executor's queue is full) how many
// whole seconds to wait before submitting again.
const RetryAfterHeader = "Retry-After"

// setRetryAfter sets Retry-After, in whole seconds rounded up and at least 1, when err is an
// *app.BusyError.
func setRetryAfter(w http.ResponseWriter, err error) {
	var busy *app.BusyError
	if !errors.As(err, &busy) {
		return
	}
	secs := max(int64((busy.RetryAfter+time.Second-1)/time.Second), 1)
	w.Header().Set(RetryAfterHeader, strconv.FormatInt(secs, 10))
}
