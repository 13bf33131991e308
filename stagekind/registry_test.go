package stagekind

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
)

func okHandler() stage.Handler {
	return stage.HandlerFunc(func(context.Context, stage.Request) (json.RawMessage, error) {
		return json.RawMessage(`{"ok":true}`), nil
	})
}

func TestRegistryRegisterAndLookup(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	require.NoError(t, r.Register("custom-kind_2", okHandler()))

	h, ok := r.Handler("custom-kind_2")
	require.True(t, ok)
	out, err := h.Run(context.Background(), stage.Request{})
	require.NoError(t, err)
	assert.JSONEq(t, `{"ok":true}`, string(out))

	_, ok = r.Handler("missing")
	assert.False(t, ok)
	assert.Equal(t, []string{"custom-kind_2"}, r.Kinds())
}

func TestRegistryDuplicate(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	require.NoError(t, r.Register("deploy", okHandler()))
	err := r.Register("deploy", okHandler())
	require.ErrorIs(t, err, ErrDuplicateKind)
}

func TestRegistryInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		kind string
		h    stage.Handler
	}{
		{name: "empty", kind: "", h: okHandler()},
		{name: "upper case", kind: "Deploy", h: okHandler()},
		{name: "leading digit", kind: "1deploy", h: okHandler()},
		{name: "leading dash", kind: "-deploy", h: okHandler()},
		{name: "dot", kind: "de.ploy", h: okHandler()},
		{name: "colon", kind: "de:ploy", h: okHandler()},
		{name: "too long", kind: "a" + fmt.Sprintf("%032d", 0), h: okHandler()},
		{name: "nil handler", kind: "deploy", h: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := NewRegistry()
			require.ErrorIs(t, r.Register(tt.kind, tt.h), ErrInvalidKind)
			assert.Empty(t, r.Kinds())
		})
	}
}

func TestRegistryLongestValidName(t *testing.T) {
	t.Parallel()
	require.NoError(t, NewRegistry().Register("a"+fmt.Sprintf("%031d", 0), okHandler()))
}

func TestBuiltin(t *testing.T) {
	t.Parallel()
	r := Builtin(HTTPOptions{})
	assert.Equal(t, []string{"approval", "exec", "http", "noop", "prometheus", "sleep"}, r.Kinds())
	for _, kind := range r.Kinds() {
		h, ok := r.Handler(kind)
		require.True(t, ok, kind)
		require.NotNil(t, h, kind)
	}
	h, _ := r.Handler(KindSleep)
	assert.Implements(t, (*stage.ParamValidator)(nil), h)
	h, _ = r.Handler(KindHTTP)
	assert.Implements(t, (*stage.ParamValidator)(nil), h)
}

func TestRegistryConcurrent(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			kind := fmt.Sprintf("kind-%d", i)
			assert.NoError(t, r.Register(kind, okHandler()))
			_, ok := r.Handler(kind)
			assert.True(t, ok)
			_ = r.Kinds()
		}()
	}
	wg.Wait()
	assert.Len(t, r.Kinds(), 16)
}
