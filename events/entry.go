package events

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/executor-dev/executor/domain/event"
)

// ErrBadID: a Last-Event-ID that is not an ID of the source asked. Match it with errors.Is.
var ErrBadID = errors.New("events: not an event id")

// Entry is one event as a watcher gets it: with the ID it resumes after (the SSE id). On the
// in-memory hub the ID is the event's number ("42"); on Redis it is the stream entry's ID
// ("1732390000123-0"), the same on every executor.
type Entry struct {
	ID    string
	Event event.Event
}

// ParseID parses an entry ID: "<ms>-<seq>" (a Redis stream entry ID) or "<n>" (a hub's
// number, or a stream ID without its sequence, which Redis reads as "<n>-0").
func ParseID(s string) (ms, seq uint64, err error) {
	head, tail, dashed := strings.Cut(s, "-")
	ms, err = strconv.ParseUint(head, 10, 64)
	if err != nil || head == "" || head[0] == '+' {
		return 0, 0, fmt.Errorf("%w: %q", ErrBadID, s)
	}
	if dashed {
		seq, err = strconv.ParseUint(tail, 10, 64)
		if err != nil || tail == "" || tail[0] == '+' {
			return 0, 0, fmt.Errorf("%w: %q", ErrBadID, s)
		}
	}
	return ms, seq, nil
}

// CompareIDs orders two entry IDs of one source: -1 when a is older than b, 0 when they are
// the same, +1 when a is newer. An ID that does not parse sorts before every other.
func CompareIDs(a, b string) int {
	am, as, aerr := ParseID(a)
	bm, bs, berr := ParseID(b)
	switch {
	case aerr != nil && berr != nil:
		return 0
	case aerr != nil:
		return -1
	case berr != nil:
		return 1
	case am != bm:
		return cmp(am, bm)
	default:
		return cmp(as, bs)
	}
}

func cmp(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
