package redisrepo_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/infra/repotest"
)

// The contract suite that the in-memory store passes, against Redis: each store gets its own
// key prefix on one private redis-server.
func TestContract(t *testing.T) {
	srv := redistest.Start(t)
	client := srv.Client()
	var n atomic.Int64
	repotest.Run(t, func(t *testing.T) repotest.Store {
		s := redisrepo.New(client, redisrepo.Options{Keys: rediskey.New(fmt.Sprintf("c%d:", n.Add(1)))})
		return repotest.Store{Creator: s, Plans: s.Plans(), Tasks: s.Tasks(), Checkpoints: s.Checkpoints()}
	})
}
