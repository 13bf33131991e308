package checkpoint_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
)

func TestWithProgress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		stage   string
		data    json.RawMessage
		wantErr error
	}{
		{"next stage", "c", json.RawMessage(`{"status":202}`), nil},
		{"forget", "c", nil, nil},
		{"completed stage", "a", json.RawMessage(`{}`), checkpoint.ErrInvalid},
		{"no stage", "", json.RawMessage(`{}`), checkpoint.ErrInvalid},
		{"not JSON", "c", json.RawMessage(`{nope`), checkpoint.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := recorded(t)
			got, err := c.WithProgress(tt.stage, tt.data, 3, t0.Add(time.Minute))
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Nil(t, c.Progress(tt.stage), "the original is not changed")
			assert.Equal(t, tt.data, got.Progress(tt.stage))
			assert.Nil(t, got.Progress("other"), "progress belongs to its stage")
			assert.Equal(t, uint64(3), got.Fence())
			assert.Equal(t, c.CompletedStages(), got.CompletedStages())
		})
	}
}

func TestProgressForgottenByRecordAndReset(t *testing.T) {
	t.Parallel()
	c, err := recorded(t).WithProgress("c", json.RawMessage(`{"id":"d-1"}`), 2, t0)
	require.NoError(t, err)
	require.JSONEq(t, `{"id":"d-1"}`, string(c.Progress("c")))

	done := c.Clone()
	require.NoError(t, done.Record(2, "c", json.RawMessage(`{"ok":true}`), 2, t0))
	assert.Nil(t, done.Progress("c"), "a completed stage has no progress")
	assert.Nil(t, done.State().Progress)

	reset := c.Clone()
	reset.Reset(3, t0)
	assert.Nil(t, reset.Progress("c"), "a retry from the start forgets it")
	assert.NotNil(t, c.Progress("c"), "clones are independent")
}

func TestLoadProgress(t *testing.T) {
	t.Parallel()
	c, err := recorded(t).WithProgress("c", json.RawMessage(`{"id":"d-1"}`), 2, t0)
	require.NoError(t, err)
	loaded, err := checkpoint.Load(c.State())
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"d-1"}`, string(loaded.Progress("c")))

	tests := []struct {
		name     string
		progress *checkpoint.Progress
	}{
		{"of a completed stage", &checkpoint.Progress{Stage: "a", Data: json.RawMessage(`{}`)}},
		{"without a stage", &checkpoint.Progress{Data: json.RawMessage(`{}`)}},
		{"not JSON", &checkpoint.Progress{Stage: "c", Data: json.RawMessage(`{x`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := c.State()
			s.Progress = tt.progress
			_, err := checkpoint.Load(s)
			require.ErrorIs(t, err, checkpoint.ErrInvalid)
		})
	}
}
