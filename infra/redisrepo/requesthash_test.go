package redisrepo_test

import (
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
)

// A plan's request hash is written to Redis with it: another executor (its own mirror empty)
// reads it back from the plan hash, to compare a repeated Idempotency-Key with it.
func TestRequestHashIsReadBackByAnotherExecutor(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client()
	keys := rediskey.New("rh:")
	tests := []struct{ name, key, hash string }{
		{"with a hash", "release-1", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
		{"written before hashes existed", "release-0", ""},
	}
	for _, tt := range tests {
		p, err := plan.New(plan.Draft{
			ID: ulid.Make().String(), Stages: []stage.Spec{{Name: "a", Kind: "noop"}},
			TaskIDs: []string{ulid.Make().String()}, IdempotencyKey: tt.key, RequestHash: tt.hash,
		}, time.Now())
		require.NoError(t, err)
		require.NoError(t, redisrepo.New(client, redisrepo.Options{Keys: keys}).Plans().Create(t.Context(), p))

		other := redisrepo.New(client, redisrepo.Options{Keys: keys})
		got, err := other.Plans().ByIdempotencyKey(t.Context(), tt.key)
		require.NoError(t, err, tt.name)
		assert.Equal(t, p.ID(), got.ID(), tt.name)
		assert.Equal(t, tt.hash, got.RequestHash(), tt.name)
	}
}
