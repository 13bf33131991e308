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
// in-memory hub the ID is the event's number ("42"); on Redis it names the stream entry that
// holds the event and its place in it: "1732390000123-0" for an entry's first event,
// "1732390000123-0-2" for its third (an entry holds the events one executor wrote together),
// the same on every executor.
type Entry struct {
	ID    string
	Event event.Event
}

// ParseID parses an entry ID: "<ms>-<seq>-<index>" (the index-th event of a Redis stream
// entry), "<ms>-<seq>" (a stream entry's first event) or "<n>" (a hub's number, or a stream
// ID without its sequence, which Redis reads as "<n>-0").
func ParseID(s string) (ms, seq, index uint64, err error) {
	parts := strings.SplitN(s, "-", 4)
	if len(parts) > 3 {
		return 0, 0, 0, fmt.Errorf("%w: %q", ErrBadID, s)
	}
	var n [3]uint64
	for i, part := range parts {
		if part == "" || part[0] == '+' {
			return 0, 0, 0, fmt.Errorf("%w: %q", ErrBadID, s)
		}
		if n[i], err = strconv.ParseUint(part, 10, 64); err != nil {
			return 0, 0, 0, fmt.Errorf("%w: %q", ErrBadID, s)
		}
	}
	return n[0], n[1], n[2], nil
}

// StreamEntryID is the ID of the Redis stream entry that holds the event of entry ID id
// (which must parse): "<ms>-<seq>".
func StreamEntryID(id string) string {
	ms, seq, _, _ := ParseID(id)
	return strconv.FormatUint(ms, 10) + "-" + strconv.FormatUint(seq, 10)
}

// CompareIDs orders two entry IDs of one source: -1 when a is older than b, 0 when they are
// the same, +1 when a is newer. An ID that does not parse sorts before every other.
func CompareIDs(a, b string) int {
	am, as, ai, aerr := ParseID(a)
	bm, bs, bi, berr := ParseID(b)
	switch {
	case aerr != nil && berr != nil:
		return 0
	case aerr != nil:
		return -1
	case berr != nil:
		return 1
	case am != bm:
		return cmp(am, bm)
	case as != bs:
		return cmp(as, bs)
	default:
		return cmp(ai, bi)
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
