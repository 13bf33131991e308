package stagekind_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/stagekind"
)

func TestApprovalWaitsThenFollowsTheDecision(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		decision *stage.Decision
		check    func(t *testing.T, out json.RawMessage, err error)
	}{
		{"no decision: waits with the message", nil, func(t *testing.T, out json.RawMessage, err error) {
			require.ErrorIs(t, err, stage.ErrAwaiting)
			var aw *stage.AwaitError
			require.ErrorAs(t, err, &aw)
			assert.Equal(t, stagekind.ReasonApproval, aw.Reason)
			assert.Equal(t, "check the error rate", aw.Message)
			assert.Nil(t, out)
		}},
		{"approved: passes with the decision as output", &stage.Decision{Approved: true, Comment: "ok", DecidedAt: at},
			func(t *testing.T, out json.RawMessage, err error) {
				require.NoError(t, err)
				assert.JSONEq(t, `{"approved":true,"comment":"ok","decidedAt":"2026-11-21T10:00:00Z"}`, string(out))
			}},
		{"rejected: permanent failure", &stage.Decision{Approved: false, Comment: "5xx up", DecidedAt: at},
			func(t *testing.T, out json.RawMessage, err error) {
				require.ErrorIs(t, err, stagekind.ErrRejected)
				assert.Equal(t, stage.ClassPermanent, stage.AsError(err).Class)
				assert.Contains(t, stage.AsError(err).Message, "rejected by an operator")
				assert.NotContains(t, stage.AsError(err).Message, "5xx up", "the comment stays on the decision: failures are logged")
				assert.NotErrorIs(t, err, stage.ErrAwaiting)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := stagekind.Approval{}.Run(t.Context(), stage.Request{
				Params: map[string]any{"message": "check the error rate"}, Decision: tt.decision,
			})
			tt.check(t, out, err)
		})
	}
}

func TestApprovalParams(t *testing.T) {
	t.Parallel()
	require.NoError(t, stagekind.Approval{}.ValidateParams(nil))
	require.NoError(t, stagekind.Approval{}.ValidateParams(map[string]any{"message": "go?"}))
	var fe *stage.FieldError
	require.ErrorAs(t, stagekind.Approval{}.ValidateParams(map[string]any{"message": 3}), &fe)
	assert.Equal(t, "message", fe.Field)
	require.ErrorAs(t, stagekind.Approval{}.ValidateParams(map[string]any{"mesage": "typo"}), &fe)
	assert.Equal(t, "mesage", fe.Field)
	require.ErrorIs(t, stagekind.Approval{}.ValidateParams(map[string]any{"mesage": "typo"}), stagekind.ErrInvalidParams)
}
