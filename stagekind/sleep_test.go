package stagekind

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
)

// requireParamError checks that err is a params error naming param.
func requireParamError(t *testing.T, err error, param string) {
	t.Helper()
	require.ErrorIs(t, err, ErrInvalidParams)
	var fe *stage.FieldError
	require.True(t, errors.As(err, &fe), "want a *stage.FieldError, got %T", err)
	assert.Equal(t, param, fe.Field)
}

func TestSleepValidateParams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		params map[string]any
		param  string // "" means valid
	}{
		{name: "missing", params: map[string]any{}, param: "duration"},
		{name: "nil params", params: nil, param: "duration"},
		{name: "not a string", params: map[string]any{"duration": 30}, param: "duration"},
		{name: "unparsable", params: map[string]any{"duration": "soon"}, param: "duration"},
		{name: "zero", params: map[string]any{"duration": "0s"}, param: "duration"},
		{name: "negative", params: map[string]any{"duration": "-1s"}, param: "duration"},
		{name: "too long", params: map[string]any{"duration": "24h1s"}, param: "duration"},
		{name: "unknown param", params: map[string]any{"duration": "1s", "durration": "2s"}, param: "durration"},
		{name: "ok", params: map[string]any{"duration": "30s"}},
		{name: "ok at the maximum", params: map[string]any{"duration": "24h"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := Sleep{}.ValidateParams(tt.params)
			if tt.param == "" {
				require.NoError(t, err)
				return
			}
			requireParamError(t, err, tt.param)
		})
	}
}

func TestSleepRunInvalidParamsIsPermanent(t *testing.T) {
	t.Parallel()
	_, err := Sleep{}.Run(context.Background(), stage.Request{Params: map[string]any{"duration": "x"}})
	require.ErrorIs(t, err, ErrInvalidParams)
	assert.Equal(t, stage.ClassPermanent, stage.AsError(err).Class)
}

func TestSleepSleeps(t *testing.T) {
	t.Parallel()
	start := time.Now()
	out, err := Sleep{}.Run(context.Background(), stage.Request{Params: map[string]any{"duration": "50ms"}})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)
	assert.JSONEq(t, `{"slept":"50ms"}`, string(out))
}

func TestSleepCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Sleep{}.Run(ctx, stage.Request{Params: map[string]any{"duration": "10s"}})
		done <- err
	}()
	time.Sleep(10 * time.Millisecond) // let it start waiting
	cancelled := time.Now()
	cancel()
	select {
	case err := <-done:
		assert.Less(t, time.Since(cancelled), 100*time.Millisecond)
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, stage.ClassCancelled, stage.AsError(err).Class)
	case <-time.After(time.Second):
		t.Fatal("sleep did not return after cancel")
	}
}

func TestSleepDeadlineIsTimeout(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := Sleep{}.Run(ctx, stage.Request{Params: map[string]any{"duration": "10s"}})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, stage.ClassTimeout, stage.AsError(err).Class)
}
