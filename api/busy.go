package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/task"
)

// RetryAfterHeader tells a client refused with 429 (the executor's queue is full) or with 503
// (new tenant claims wait after Redis lost its data; the executor has not reached Redis since
// it started) how many whole seconds to wait before submitting again.
const RetryAfterHeader = "Retry-After"

// setRetryAfter sets Retry-After, in whole seconds rounded up and at least 1, when err is an
// *app.BusyError, a *task.ClaimsPausedError or a request refused with one (an event stream
// over its caps), or matches app.ErrNotReady.
func setRetryAfter(w http.ResponseWriter, err error) {
	var (
		busy   *app.BusyError
		paused *task.ClaimsPausedError
		req    *requestError
		after  time.Duration
	)
	switch {
	case errors.As(err, &req) && req.retryAfter > 0:
		after = time.Duration(req.retryAfter) * time.Second
	case errors.As(err, &busy):
		after = busy.RetryAfter
	case errors.As(err, &paused):
		after = paused.RetryAfter
	case errors.Is(err, app.ErrNotReady):
		after = app.NotReadyRetryAfter
	default:
		return
	}
	secs := max(int64((after+time.Second-1)/time.Second), 1)
	w.Header().Set(RetryAfterHeader, strconv.FormatInt(secs, 10))
}
