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
		return repotest.Store{Creator: s, Plans: s.Plans(), Tasks: s.Tasks(), Checkpoints: s.Checkpoints(), Index: s.Tasks(), Transcripts: s.Transcripts(), Audit: s.Audit()}
	})
}

// The same contract on a Redis Cluster of three masters: every script and pipeline of the
// store touches one slot (a script whose keys crossed slots would answer CROSSSLOT), and
// pipelines and script loads reach every master.
func TestContractOnACluster(t *testing.T) {
	client := redistest.StartCluster(t, 3, 0).Client()
	var n atomic.Int64
	repotest.Run(t, func(t *testing.T) repotest.Store {
		s := redisrepo.New(client, redisrepo.Options{Keys: rediskey.New(fmt.Sprintf("c%d:", n.Add(1)))})
		return repotest.Store{Creator: s, Plans: s.Plans(), Tasks: s.Tasks(), Checkpoints: s.Checkpoints(), Index: s.Tasks(), Transcripts: s.Transcripts(), Audit: s.Audit()}
	})
}
