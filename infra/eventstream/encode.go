package eventstream

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/executor-dev/executor/domain/event"
)

// appendEvents appends batch to dst as the JSON array encoding/json makes of it (the same
// bytes: the reader decodes it with encoding/json), without reflection: the writer encodes
// every event of the executor, about one per stage transition.
func appendEvents(dst []byte, batch []event.Event) []byte {
	dst = append(dst, '[')
	for i := range batch {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendEvent(dst, &batch[i])
	}
	return append(dst, ']')
}

// appendEvent appends e as encoding/json encodes an event.Event: its fields in order,
// omitempty ones left out when empty.
func appendEvent(dst []byte, e *event.Event) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendUint(dst, e.ID, 10)
	dst = append(dst, `,"kind":`...)
	dst = appendString(dst, string(e.Kind))
	dst = append(dst, `,"at":"`...)
	dst = e.At.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","planId":`...)
	dst = appendString(dst, e.PlanID)
	if e.TaskID != "" {
		dst = append(dst, `,"taskId":`...)
		dst = appendString(dst, e.TaskID)
	}
	if e.TenantID != "" {
		dst = append(dst, `,"tenantId":`...)
		dst = appendString(dst, e.TenantID)
	}
	dst = append(dst, `,"status":`...)
	dst = appendString(dst, e.Status)
	dst = append(dst, `,"stage":`...)
	dst = strconv.AppendInt(dst, int64(e.Stage), 10)
	if e.StageName != "" {
		dst = append(dst, `,"stageName":`...)
		dst = appendString(dst, e.StageName)
	}
	if e.Run != 0 {
		dst = append(dst, `,"run":`...)
		dst = strconv.AppendInt(dst, int64(e.Run), 10)
	}
	if a := e.Last; a != nil {
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
	if e.Ring != nil { // a rolling plan's ring changes: rare, encoded by encoding/json itself
		if b, err := json.Marshal(e.Ring); err == nil {
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
