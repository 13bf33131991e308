package members_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/members"
)

func TestMembersMemoryListsItself(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, err := members.NewMemory(members.Options{Name: "solo", Address: "127.0.0.1:8080", Runs: func() int { return 2 }})
	require.NoError(t, err)
	list, err := m.List(ctx)
	require.NoError(t, err)
	assert.Empty(t, list, "not started")

	require.NoError(t, m.Start(ctx))
	list, err = m.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "solo", list[0].Name)
	assert.Equal(t, "127.0.0.1:8080", list[0].Address)
	assert.Equal(t, 2, list[0].Runs)
	assert.True(t, list[0].Alive)
	assert.False(t, list[0].StartedAt.IsZero())
	for name, want := range map[string]bool{"solo": true, "other": false} {
		alive, err := m.Alive(ctx, name)
		require.NoError(t, err)
		assert.Equal(t, want, alive, name)
	}

	require.NoError(t, m.Stop(ctx))
	alive, err := m.Alive(ctx, "solo")
	require.NoError(t, err)
	assert.False(t, alive)
}

func TestMembersCheckName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, value string
		ok          bool
	}{
		{"host and pid", "web-1.example.com-4242", true},
		{"underscore", "exec_1", true},
		{"128 characters", "a" + strings.Repeat("b", 127), true},
		{"empty", "", false},
		{"leading dash", "-x", false},
		{"brace", "a{b}", false},
		{"colon", "a:b", false},
		{"space", "a b", false},
		{"129 characters", strings.Repeat("a", 129), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := members.CheckName(tc.value)
			if tc.ok {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "members: invalid executor name")
		})
	}
	assert.NoError(t, members.CheckName(members.DefaultName()), members.DefaultName())
	_, err := members.NewRedis(nil, members.Options{Name: "a:b"})
	assert.Error(t, err)
	_, err = members.NewMemory(members.Options{})
	assert.Error(t, err)
}
