package redisrepo

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
)

// newCheckpoint records one stage per output, named s0, s1, ….
func newCheckpoint(t *testing.T, outputs ...json.RawMessage) *checkpoint.Checkpoint {
	t.Helper()
	cp := checkpoint.New("01KAKQ9ZP5N3S8E2W7Y4C6V1XD")
	for i, out := range outputs {
		at := time.Date(2026, 11, 21, 10, 0, i, 123456789, time.UTC)
		require.NoError(t, cp.Record(i, "s"+strconv.Itoa(i), out, uint64(3+i), at))
	}
	return cp
}

func TestCheckpointCodecRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		outputs     []json.RawMessage
		contextData string // as stored
	}{
		{name: "nothing completed", contextData: `{}`},
		{name: "nil outputs", outputs: []json.RawMessage{nil, nil, nil}, contextData: `{}`},
		{
			name:        "JSON outputs",
			outputs:     []json.RawMessage{json.RawMessage(`{"url":"https://a.example","n":1}`), json.RawMessage(`[1,2]`), json.RawMessage(`"done"`)},
			contextData: `{"s0":{"url":"https://a.example","n":1},"s1":[1,2],"s2":"done"}`,
		},
		{
			name:        "nil and JSON outputs",
			outputs:     []json.RawMessage{nil, json.RawMessage(`{"v":0}`), nil, json.RawMessage(`false`), json.RawMessage(`0`)},
			contextData: `{"s1":{"v":0},"s3":false,"s4":0}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := newCheckpoint(t, tt.outputs...)
			b, err := encCheckpoint(want)
			require.NoError(t, err)
			var stored map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(b, &stored))
			require.ElementsMatch(t, []string{"lastCompletedStageIndex", "completedStages", "contextData", "savedAt", "fence"},
				keysOf(stored), "the task id is the key's")
			require.JSONEq(t, tt.contextData, string(stored["contextData"]))

			got, err := decCheckpoint(want.TaskID(), b)
			require.NoError(t, err)
			require.Equal(t, want.State(), got.State())
			for _, name := range want.CompletedStages() {
				out, ok := got.Output(name)
				require.True(t, ok, "stage %s", name)
				wantOut, _ := want.Output(name)
				require.Equal(t, wantOut, out, "stage %s", name)
			}
		})
	}
}

func TestCheckpointCodecProgress(t *testing.T) {
	t.Parallel()
	want, err := newCheckpoint(t, json.RawMessage(`{"v":1}`)).WithProgress("s1", json.RawMessage(`{"status":202,"body":{"id":"d-7"}}`), 4, time.Now())
	require.NoError(t, err)
	b, err := encCheckpoint(want)
	require.NoError(t, err)
	var stored map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &stored))
	require.JSONEq(t, `{"stage":"s1","data":{"status":202,"body":{"id":"d-7"}}}`, string(stored["progress"]))
	got, err := decCheckpoint(want.TaskID(), b)
	require.NoError(t, err)
	require.Equal(t, want.State(), got.State())
	require.JSONEq(t, `{"status":202,"body":{"id":"d-7"}}`, string(got.Progress("s1")))
}

func keysOf(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// An output that is the JSON literal null is stored as no output, like nil, and reads back as
// nil: Outputs and the API show both alike.
func TestCheckpointCodecNullOutputReadsAsNil(t *testing.T) {
	t.Parallel()
	for _, null := range []json.RawMessage{json.RawMessage(`null`), json.RawMessage(" null\n")} {
		cp := newCheckpoint(t, null)
		b, err := encCheckpoint(cp)
		require.NoError(t, err)
		require.Contains(t, string(b), `"contextData":{}`)
		got, err := decCheckpoint(cp.TaskID(), b)
		require.NoError(t, err)
		out, ok := got.Output("s0")
		require.True(t, ok)
		require.Nil(t, out)
		require.Equal(t, map[string]any{"s0": map[string]any{}}, got.Outputs())
	}
}

func TestCheckpointCodecDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		key     string // the key's task id: "" the usual one, "-" none
		stored  string
		want    map[string]json.RawMessage // outputs; nil when decoding fails
		wantErr error
	}{
		{
			name: "written with a null per stage (before nulls were left out)",
			stored: `{"taskId":"01KAKQ9ZP5N3S8E2W7Y4C6V1XD","lastCompletedStageIndex":1,"completedStages":["a","b"],` +
				`"contextData":{"a":null,"b":{"x":1}},"savedAt":"2026-11-21T10:00:00.5Z","fence":2}`,
			want: map[string]json.RawMessage{"a": nil, "b": json.RawMessage(`{"x":1}`)},
		},
		{
			name: "no contextData",
			stored: `{"taskId":"01KAKQ9ZP5N3S8E2W7Y4C6V1XD","lastCompletedStageIndex":0,"completedStages":["a"],` +
				`"savedAt":"2026-11-21T10:00:00.5Z","fence":2}`,
			want: map[string]json.RawMessage{"a": nil},
		},
		{
			name: "outputs of stages not completed are dropped",
			stored: `{"taskId":"01KAKQ9ZP5N3S8E2W7Y4C6V1XD","lastCompletedStageIndex":-1,"completedStages":[],` +
				`"contextData":{"a":1},"savedAt":"2026-11-21T10:00:00.5Z","fence":2}`,
			want: map[string]json.RawMessage{},
		},
		{name: "not JSON", stored: `{"taskId":`},
		{
			name: "last completed disagrees with the stages",
			stored: `{"taskId":"01KAKQ9ZP5N3S8E2W7Y4C6V1XD","lastCompletedStageIndex":2,"completedStages":["a"],` +
				`"contextData":{},"savedAt":"2026-11-21T10:00:00.5Z","fence":2}`,
			wantErr: checkpoint.ErrInvalid,
		},
		{name: "no task id in the key or the value", key: "-", stored: `{"lastCompletedStageIndex":-1,"contextData":{}}`, wantErr: checkpoint.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			key := tt.key
			switch key {
			case "":
				key = "01KAKQ9ZP5N3S8E2W7Y4C6V1XD" // the task id of the key the value was read from
			case "-":
				key = ""
			}
			got, err := decCheckpoint(key, []byte(tt.stored))
			if tt.want == nil {
				require.Error(t, err)
				if tt.wantErr != nil {
					require.ErrorIs(t, err, tt.wantErr)
				}
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got.State().ContextData)
		})
	}
}

// encCheckpoint appends its JSON by hand; it writes the JSON value encoding/json writes of the
// same checkpoint (contextData in stage order rather than sorted, and <, & and > as they are
// rather than escaped: the same value), compacted.
func TestEncCheckpointWritesWhatEncodingJSONWrites(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 10, 0, 0, 120000000, time.UTC)
	tests := []struct {
		name  string
		names []string
		outs  []json.RawMessage
	}{
		{"nothing completed", nil, nil},
		{"null outputs", []string{"a", "b"}, []json.RawMessage{nil, json.RawMessage(`null`)}},
		{"outputs with spaces", []string{"push-config", "health_1.2"}, []json.RawMessage{json.RawMessage(" {\n \"k\" : [1, 2] }"), json.RawMessage(`"v"`)}},
		{"a name outside the stage name pattern", []string{`we"ird`}, []json.RawMessage{json.RawMessage(`{"x":"<&>"}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cp := checkpoint.New("01KAKQ9ZP5N3S8E2W7Y4C6V1XD")
			for i, name := range tt.names {
				require.NoError(t, cp.Record(i, name, tt.outs[i], 7, at))
			}
			got, err := encCheckpoint(cp)
			require.NoError(t, err)
			s := cp.State()
			data := map[string]json.RawMessage{}
			for name, out := range s.ContextData {
				if !isNull(out) {
					data[name] = out
				}
			}
			want, err := json.Marshal(checkpointJSON{LastCompleted: s.LastCompleted, CompletedStages: s.CompletedStages,
				ContextData: data, SavedAt: s.SavedAt, Fence: s.Fence})
			require.NoError(t, err)
			if len(tt.names) == 0 { // encoding/json writes a nil slice as null; the codec writes []
				want = bytes.Replace(want, []byte(`"completedStages":null`), []byte(`"completedStages":[]`), 1)
			}
			require.JSONEq(t, string(want), string(got))
			var compact bytes.Buffer
			require.NoError(t, json.Compact(&compact, got))
			require.Equal(t, compact.String(), string(got), "compact")
		})
	}
}
