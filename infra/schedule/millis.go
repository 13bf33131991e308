package schedule

import "time"

// millis returns t in Unix milliseconds, rounded up: a score reached by the clock in whole
// milliseconds is never before t, so an entry never starts early.
func millis(t time.Time) int64 {
	ms := t.UnixMilli()
	if t.After(time.UnixMilli(ms)) {
		ms++
	}
	return ms
}
