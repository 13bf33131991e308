package redisrepo

import (
	"fmt"
	"time"
)

// Times are stored as RFC 3339 with nanoseconds, UTC, so an SRE can read a hash with
// HGETALL; the zero time is stored as "".

func encTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func decTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}

// decTimes decodes each named hash field into its destination.
func decTimes(h map[string]string, fields map[string]*time.Time) error {
	for name, dst := range fields {
		t, err := decTime(h[name])
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		*dst = t
	}
	return nil
}
