package outage

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
)

// The degraded log line names what made Redis unavailable.
func TestKindNamesTheOutage(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Args("--maxmemory", "1", "--maxmemory-policy", "noeviction"))
	oom := srv.Client().Set(context.Background(), "k", "v", 0).Err()
	require.True(t, Is(oom), "precondition: a real OOM reply")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"a closed connection", fmt.Errorf("redisrepo: save task: %w", io.EOF), "unreachable"},
		{"data lost", fmt.Errorf("redisrepo: plan x: %w", ErrDataLost), "data lost"},
		{"out of memory", fmt.Errorf("redisrepo: save task: %w", oom), "OOM"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, kind(tc.err))
		})
	}
}
