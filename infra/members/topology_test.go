package members_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/members"
	"github.com/executor-dev/executor/infra/redistest"
)

// An executor alone on its Redis must be the only live one there, and no executor joins one
// running alone: Start refuses (ErrTopology), registering nothing. Executors that are not
// alive do not count, and shared ones join each other.
func TestMembersRedisTopologiesDoNotMix(t *testing.T) {
	t.Parallel()
	shared := members.Options{Topology: members.TopologyShared}
	alone := members.Options{Topology: members.TopologyAlone}
	cases := []struct {
		name        string
		first       members.Options
		firstDies   bool
		second      members.Options
		wantRefused bool
	}{
		{name: "shared joins shared", first: shared, second: shared},
		{name: "alone refused beside a live shared one", first: shared, second: alone, wantRefused: true},
		{name: "shared refused beside a live alone one", first: alone, second: shared, wantRefused: true},
		{name: "alone refused beside a live alone one", first: alone, second: alone, wantRefused: true},
		{name: "alone starts once the other died", first: shared, firstDies: true, second: alone},
		{name: "shared starts once the alone one died", first: alone, firstDies: true, second: shared},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			client := redistest.Start(t).Client()
			first := startRedis(t, client, "exec-1", tc.first)
			if tc.firstDies {
				members.Crash(first)
				requireAlive(t, newRedis(t, client, "observer", members.Options{}), "exec-1", false)
			}
			second := newRedis(t, client, "exec-2", tc.second)
			err := second.Start(ctx)
			if !tc.wantRefused {
				require.NoError(t, err)
				list, err := second.List(ctx)
				require.NoError(t, err)
				require.Len(t, list, 2)
				assert.Equal(t, tc.second.Topology, list[1].Topology, "the registration records the topology")
				return
			}
			require.ErrorIs(t, err, members.ErrTopology)
			assert.Contains(t, err.Error(), "exec-1", "the refusal names the other executor")
			alive, err := first.Alive(ctx, "exec-2")
			require.NoError(t, err)
			assert.False(t, alive, "a refused executor leaves no liveness key")
			list, err := first.List(ctx)
			require.NoError(t, err)
			require.Len(t, list, 1, "nor an entry")
			assert.Equal(t, tc.first.Topology, list[0].Topology)
		})
	}
}
