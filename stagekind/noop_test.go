package stagekind

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
)

func TestNoopReturnsNilOutput(t *testing.T) {
	t.Parallel()
	out, err := Noop{}.Run(context.Background(), stage.Request{})
	require.NoError(t, err)
	assert.Nil(t, out)
}

func TestNoopCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Noop{}.Run(ctx, stage.Request{})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, stage.ClassCancelled, stage.AsError(err).Class)
}
