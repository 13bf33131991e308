package redisrepo

import (
	"fmt"
	"time"
)

// Times are stored as RFC 3339 UTC with all nine digits of nanoseconds, so an SRE can read a
// hash with HGETALL and a later time always sorts later as a string (restore_task.lua compares
// them); the zero time is stored as "".
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func encTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeLayout)
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
