package eventstream

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/executor-dev/executor/domain/event"
	"github.com/executor-dev/executor/events"
	"github.com/executor-dev/executor/wire"
)

// record is an event as the stream holds it (docs/redis.md, The event stream): its wire form,
// the JSON GET /v1/events sends (wire.Event), but for its id, which here is the publishing
// executor's own event number (event.Event.ID, a JSON number), not an entry ID. ID shadows
// wire.Event's own, which is not stored.
type record struct {
	ID uint64 `json:"id"`
	wire.Event
}

// recordOf is e as the stream stores it.
func recordOf(e event.Event) record { return record{ID: e.ID, Event: events.ToWire("", e)} }

// event is the event r stores, with its publisher's number as its ID.
func (r *record) event() event.Event {
	e := events.FromWire(r.Event)
	e.ID = r.ID
	return e
}

// appendEvents appends batch to dst as the JSON array of their records, the same bytes as
// encoding/json makes of them (the reader decodes it with encoding/json), without reflection:
// the writer encodes every event of the executor, about one per stage transition.
func appendEvents(dst []byte, batch []event.Event) []byte {
	dst = append(dst, '[')
	for i := range batch {
		if i > 0 {
			dst = append(dst, ',')
		}
		r := recordOf(batch[i])
		dst = appendRecord(dst, &r)
	}
	return append(dst, ']')
}

// appendRecord appends r as encoding/json encodes a record: its fields in order, omitempty
// ones left out when empty.
func appendRecord(dst []byte, r *record) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendUint(dst, r.ID, 10)
	dst = append(dst, `,"kind":`...)
	dst = appendString(dst, r.Kind)
	dst = append(dst, `,"at":"`...)
	dst = r.At.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","planId":`...)
	dst = appendString(dst, r.PlanID)
	if r.TaskID != "" {
		dst = append(dst, `,"taskId":`...)
		dst = appendString(dst, r.TaskID)
	}
	if r.TenantID != "" {
		dst = append(dst, `,"tenantId":`...)
		dst = appendString(dst, r.TenantID)
	}
	dst = append(dst, `,"status":`...)
	dst = appendString(dst, r.Status)
	dst = append(dst, `,"stage":`...)
	dst = strconv.AppendInt(dst, int64(r.Stage), 10)
	if r.StageName != "" {
		dst = append(dst, `,"stageName":`...)
		dst = appendString(dst, r.StageName)
	}
	if r.Run != 0 {
		dst = append(dst, `,"run":`...)
		dst = strconv.AppendInt(dst, int64(r.Run), 10)
	}
	if a := r.LastAttempt; a != nil {
		dst = append(dst, `,"lastAttempt":{"stageIndex":`...)
		dst = strconv.AppendInt(dst, int64(a.StageIndex), 10)
		dst = append(dst, `,"stage":`...)
		dst = appendString(dst, a.Stage)
		dst = append(dst, `,"attempt":`...)
		dst = strconv.AppendInt(dst, int64(a.Attempt), 10)
		dst = append(dst, `,"outcome":`...)
		dst = appendString(dst, a.Outcome)
		if a.Class != "" {
			dst = append(dst, `,"class":`...)
			dst = appendString(dst, a.Class)
		}
		dst = append(dst, '}')
	}
	if r.Ring != nil { // a rolling plan's ring changes: rare, encoded by encoding/json itself
		if b, err := json.Marshal(r.Ring); err == nil {
			dst = append(dst, `,"ring":`...)
			dst = append(dst, b...)
		}
	}
	return append(dst, '}')
}

// appendString appends s as a JSON string the way encoding/json writes it: <, > and & as
// \u escapes (HTML-safe), control characters escaped, invalid UTF-8 as U+FFFD, and U+2028
// and U+2029 escaped.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
