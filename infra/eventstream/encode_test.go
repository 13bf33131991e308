package eventstream

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/event"
)

// The hand-written encoding is byte for byte what encoding/json makes of the same events'
// records (the reader decodes it with encoding/json), for every field set or left empty and
// for strings that need escaping.
func TestAppendEventsEncodesAsEncodingJSON(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 24, 1, 2, 3, 456789000, time.UTC)
	tests := []struct {
		name   string
		events []event.Event
	}{
		{"no events", []event.Event{}},
		{"a plan event", []event.Event{{ID: 1, Kind: event.Plan, At: at, PlanID: "p1", Status: "RUNNING"}}},
		{"a stage event", []event.Event{{ID: 2, Kind: event.Stage, At: at, PlanID: "p1", TaskID: "t1",
			TenantID: "acme", Status: "RUNNING", Stage: 3, StageName: "restart", Run: 2}}},
		{"a task event with its last attempt", []event.Event{{ID: 3, Kind: event.Task, At: at.Add(-time.Hour),
			PlanID: "p1", TaskID: "t1", TenantID: "acme", Status: "FAILED", Stage: 1,
			Last: &event.Attempt{StageIndex: 1, Stage: "push", Attempt: 3, Outcome: "failed", Class: "permanent"}}}},
		{"an attempt without class", []event.Event{{ID: 4, Kind: event.Task, At: at, PlanID: "p",
			Last: &event.Attempt{Stage: "s", Outcome: "succeeded"}}}},
		{"strings to escape", []event.Event{{ID: 5, Kind: event.Task, At: at.In(time.FixedZone("x", 3600)),
			PlanID: "p\"<&>\\", TenantID: "t\n\r\t\b\f\x01\x1f", Status: "é – 😀 \u2028\u2029",
			StageName: "bad \xff\xfe utf8"}}},
		{"a plan event with its ring", []event.Event{{ID: 8, Kind: event.Plan, At: at, PlanID: "p", Status: "RUNNING",
			Ring: &event.Ring{Index: 1, Wave: "ten<%>", State: "baking", BakeEndsAt: &at, Halt: "3 of 20 failed"}}}},
		{"several events", []event.Event{{ID: 6, Kind: event.Plan, PlanID: "a"}, {ID: 7, Kind: event.Task,
			PlanID: "b", Stage: -1, Run: 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want, err := json.Marshal(recordsOf(tc.events))
			require.NoError(t, err)
			require.Equal(t, string(want), string(appendEvents(nil, tc.events)))
		})
	}
}

func BenchmarkAppendEvents(b *testing.B) {
	batch := make([]event.Event, batchSize)
	for i := range batch {
		batch[i] = event.Event{ID: uint64(i), Kind: event.Stage, At: time.Now(), PlanID: "01M85H4FEGRDNRGSSZ8CEWQBHZ",
			TaskID: "01M85H4FEGRDNRGSSZBEFVXQFB", TenantID: "t0000049", Status: "RUNNING", Stage: 4, StageName: "s5", Run: 1}
	}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = appendEvents(buf[:0], batch)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		records := recordsOf(batch)
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(records)
		}
	})
}

// recordsOf is es as the stream stores them.
func recordsOf(es []event.Event) []record {
	out := make([]record, len(es))
	for i, e := range es {
		out[i] = recordOf(e)
	}
	return out
}
