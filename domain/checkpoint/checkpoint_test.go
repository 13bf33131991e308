package checkpoint_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
)

var t0 = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

const taskID = "01JNQ4Z0000000000000000000"

// recorded returns a checkpoint with stages "a" and "b" recorded under epoch 2.
func recorded(t *testing.T) *checkpoint.Checkpoint {
	t.Helper()
	c := checkpoint.New(taskID)
	require.NoError(t, c.Record(0, "a", json.RawMessage(`{"url":"https://a"}`), 2, t0))
	require.NoError(t, c.Record(1, "b", json.RawMessage(`[1,2]`), 2, t0.Add(time.Second)))
	return c
}

func TestNew(t *testing.T) {
	t.Parallel()
	c := checkpoint.New(taskID)
	assert.Equal(t, taskID, c.TaskID())
	assert.Equal(t, -1, c.LastCompletedStageIndex())
	assert.Equal(t, 0, c.Next())
	assert.Empty(t, c.CompletedStages())
	assert.Empty(t, c.Outputs())
	assert.Zero(t, c.Fence())
	assert.True(t, c.SavedAt().IsZero())
}

func TestRecord(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		done    int // stages recorded first
		index   int
		output  json.RawMessage
		wantErr error
	}{
		{"first stage", 0, 0, json.RawMessage(`{"k":1}`), nil},
		{"next stage", 1, 1, json.RawMessage(`"v"`), nil},
		{"nil output", 0, 0, nil, nil},
		{"JSON null", 0, 0, json.RawMessage(`null`), nil},
		{"skips a stage", 0, 1, json.RawMessage(`{}`), checkpoint.ErrOutOfOrder},
		{"repeats a stage", 1, 0, json.RawMessage(`{}`), checkpoint.ErrOutOfOrder},
		{"negative index", 0, -1, json.RawMessage(`{}`), checkpoint.ErrOutOfOrder},
		{"not JSON", 0, 0, json.RawMessage(`{not json`), checkpoint.ErrInvalid},
		{"empty output", 0, 0, json.RawMessage{}, checkpoint.ErrInvalid},
		{"plain text", 0, 0, json.RawMessage(`hello`), checkpoint.ErrInvalid},
	}
	names := []string{"s0", "s1", "s2"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := checkpoint.New(taskID)
			for i := range tt.done {
				require.NoError(t, c.Record(i, names[i], json.RawMessage(`{}`), 1, t0))
			}
			before := c.State()
			name := "new"
			err := c.Record(tt.index, name, tt.output, 1, t0.Add(time.Minute))
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Equal(t, before, c.State(), "a refused record must not change the checkpoint")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.index, c.LastCompletedStageIndex())
			assert.Equal(t, tt.index+1, c.Next())
			assert.Equal(t, append(append([]string(nil), names[:tt.done]...), name), c.CompletedStages())
			out, ok := c.Output(name)
			require.True(t, ok)
			assert.Equal(t, tt.output, out)
			assert.Equal(t, t0.Add(time.Minute), c.SavedAt())
		})
	}
}

func TestFenceNeverDecreases(t *testing.T) {
	t.Parallel()
	c := checkpoint.New(taskID)
	require.NoError(t, c.Record(0, "a", nil, 5, t0))
	assert.Equal(t, uint64(5), c.Fence())
	require.NoError(t, c.Record(1, "b", nil, 3, t0))
	assert.Equal(t, uint64(5), c.Fence())
	c.Reset(4, t0)
	assert.Equal(t, uint64(5), c.Fence())
	c.Reset(9, t0)
	assert.Equal(t, uint64(9), c.Fence())
}

func TestOutputs(t *testing.T) {
	t.Parallel()
	c := recorded(t)
	require.NoError(t, c.Record(2, "c", nil, 2, t0))
	assert.Equal(t, map[string]any{
		"a": map[string]any{"url": "https://a"},
		"b": []any{1.0, 2.0},
		"c": map[string]any{},
	}, c.Outputs())

	out, ok := c.Output("a")
	require.True(t, ok)
	assert.JSONEq(t, `{"url":"https://a"}`, string(out))
	_, ok = c.Output("missing")
	assert.False(t, ok)
}

func TestCompletedStagesIsACopy(t *testing.T) {
	t.Parallel()
	c := recorded(t)
	got := c.CompletedStages()
	got[0] = "mutated"
	assert.Equal(t, []string{"a", "b"}, c.CompletedStages())
}

func TestReset(t *testing.T) {
	t.Parallel()
	c := recorded(t)
	c.Reset(3, t0.Add(time.Hour))
	assert.Equal(t, -1, c.LastCompletedStageIndex())
	assert.Equal(t, 0, c.Next())
	assert.Empty(t, c.CompletedStages())
	assert.Empty(t, c.Outputs())
	_, ok := c.Output("a")
	assert.False(t, ok)
	assert.Equal(t, uint64(3), c.Fence())
	assert.Equal(t, t0.Add(time.Hour), c.SavedAt())
	require.NoError(t, c.Record(0, "a", nil, 3, t0), "recording starts again at stage 0")
}

func TestStateRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cp   func(t *testing.T) *checkpoint.Checkpoint
	}{
		{"empty", func(*testing.T) *checkpoint.Checkpoint { return checkpoint.New(taskID) }},
		{"recorded", recorded},
		{"with nil output", func(t *testing.T) *checkpoint.Checkpoint {
			t.Helper()
			c := recorded(t)
			require.NoError(t, c.Record(2, "c", nil, 7, t0))
			return c
		}},
		{"reset", func(t *testing.T) *checkpoint.Checkpoint {
			t.Helper()
			c := recorded(t)
			c.Reset(4, t0)
			return c
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := tt.cp(t)
			s := c.State()
			assert.Equal(t, c.LastCompletedStageIndex(), s.LastCompleted)
			loaded, err := checkpoint.Load(s)
			require.NoError(t, err)
			assert.Equal(t, s, loaded.State())
			assert.Equal(t, c.Outputs(), loaded.Outputs())

			// Through JSON, as a store would persist it.
			b, err := json.Marshal(s)
			require.NoError(t, err)
			var back checkpoint.State
			require.NoError(t, json.Unmarshal(b, &back))
			loaded, err = checkpoint.Load(back)
			require.NoError(t, err)
			assert.Equal(t, c.CompletedStages(), loaded.CompletedStages())
			assert.Equal(t, c.Outputs(), loaded.Outputs())
			assert.Equal(t, c.Fence(), loaded.Fence())
			assert.True(t, c.SavedAt().Equal(loaded.SavedAt()))
		})
	}
}

func TestStateIsACopy(t *testing.T) {
	t.Parallel()
	c := recorded(t)
	s := c.State()
	s.CompletedStages[0] = "mutated"
	s.ContextData["a"] = json.RawMessage(`"mutated"`)
	assert.Equal(t, []string{"a", "b"}, c.CompletedStages())
	out, _ := c.Output("a")
	assert.JSONEq(t, `{"url":"https://a"}`, string(out))

	s = c.State()
	loaded, err := checkpoint.Load(s)
	require.NoError(t, err)
	s.CompletedStages[0] = "mutated"
	s.ContextData["a"] = json.RawMessage(`"mutated"`)
	assert.Equal(t, []string{"a", "b"}, loaded.CompletedStages(), "Load copies its input")
	out, _ = loaded.Output("a")
	assert.JSONEq(t, `{"url":"https://a"}`, string(out))
}

func TestLoadRefusesInconsistentState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(s *checkpoint.State)
	}{
		{"no task id", func(s *checkpoint.State) { s.TaskID = "" }},
		{"last completed too high", func(s *checkpoint.State) { s.LastCompleted = 2 }},
		{"last completed too low", func(s *checkpoint.State) { s.LastCompleted = 0 }},
		{"last completed -1 with stages", func(s *checkpoint.State) { s.LastCompleted = -1 }},
		{"missing output", func(s *checkpoint.State) {
			s.ContextData = map[string]json.RawMessage{"a": json.RawMessage(`{}`)}
		}},
		{"no context data", func(s *checkpoint.State) { s.ContextData = nil }},
		{"no stages but last completed 0", func(s *checkpoint.State) {
			s.CompletedStages = nil
			s.LastCompleted = 0
		}},
	}
	base := recorded(t).State()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := base
			s.CompletedStages = append([]string(nil), base.CompletedStages...)
			tt.mutate(&s)
			c, err := checkpoint.Load(s)
			require.ErrorIs(t, err, checkpoint.ErrInvalid)
			assert.Nil(t, c)
		})
	}
}

func TestCloneIsIndependent(t *testing.T) {
	t.Parallel()
	orig := checkpoint.New("01KAKQ9ZP5N3S8E2W7Y4C6V1XD")
	require.NoError(t, orig.Record(0, "a", json.RawMessage(`{"a":1}`), 1, t0))
	c := orig.Clone()
	require.Equal(t, orig.State(), c.State())

	require.NoError(t, orig.Record(1, "b", json.RawMessage(`"orig"`), 1, t0))
	require.NoError(t, c.Record(1, "b", json.RawMessage(`"clone"`), 1, t0))
	got, _ := orig.Output("b")
	require.JSONEq(t, `"orig"`, string(got), "the clone's record did not write into the original")
	got, _ = c.Output("b")
	require.JSONEq(t, `"clone"`, string(got))

	c.Reset(2, t0)
	require.Equal(t, 2, orig.Next(), "a reset of the clone left the original as it was")
	_, ok := c.Output("a")
	require.False(t, ok)
}

// An undo takes the last completed stage and its output off the checkpoint, only that one,
// and a clone taken before keeps them: a later Record writes into a new array.
func TestUndoTakesTheLastCompletedStageOff(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	cp := checkpoint.New("T")
	require.NoError(t, cp.Record(0, "a", json.RawMessage(`{"v":1}`), 1, now))
	require.NoError(t, cp.Record(1, "b", json.RawMessage(`{"v":2}`), 1, now))
	before := cp.Clone()
	require.ErrorIs(t, cp.Undo(0, "a", 2, now), checkpoint.ErrOutOfOrder, "b is undone first")
	require.ErrorIs(t, cp.Undo(1, "x", 2, now), checkpoint.ErrOutOfOrder, "named as it completed")
	require.NoError(t, cp.Undo(1, "b", 2, now))
	assert.Equal(t, 1, cp.Next())
	_, ok := cp.Output("b")
	assert.False(t, ok)
	assert.Equal(t, uint64(2), cp.Fence())
	require.NoError(t, cp.Record(1, "b", json.RawMessage(`{"v":3}`), 3, now))
	out, _ := before.Output("b")
	assert.JSONEq(t, `{"v":2}`, string(out), "the clone kept its own")
}
