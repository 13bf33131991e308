package api_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/domain/checkpoint"
)

// A checkpoint with nothing completed (reset by a retry from the start, or holding the first
// stage's progress) has an empty list of completed stages on the wire, never null, as
// docs/openapi.yaml requires.
func TestCheckpointWithNothingCompletedHasAnEmptyList(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(api.CheckpointFrom("t1", checkpoint.New("01JNQ4Z0000000000000000000")))
	require.NoError(t, err)
	var wire map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &wire))
	assert.JSONEq(t, `[]`, string(wire["completedStages"]))
	assert.JSONEq(t, `{}`, string(wire["contextData"]))
	assert.JSONEq(t, `-1`, string(wire["lastCompletedStageIndex"]))
	assert.NotContains(t, wire, "progress")
}
