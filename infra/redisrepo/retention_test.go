package redisrepo_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/infra/repotest"
)

// The retention part of the contract that the embedded store passes on a fake clock, against
// Redis's TTLs: a retention of one second (a TTL is whole seconds), and real waits.
func TestRetentionContract(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t).Client()
	var n atomic.Int64
	repotest.RunRetention(t, func(t *testing.T) repotest.Retention {
		s := redisrepo.New(client, redisrepo.Options{Keys: rediskey.New(fmt.Sprintf("r%d:", n.Add(1))), TTL: time.Second})
		return repotest.Retention{
			Store: repotest.Store{Creator: s, Plans: s.Plans(), Tasks: s.Tasks(), Checkpoints: s.Checkpoints(), Index: s.Tasks(), Transcripts: s.Transcripts(), Audit: s.Audit()},
			TTL:   time.Second,
			Pass: func(t *testing.T, d time.Duration) {
				t.Helper()
				time.Sleep(d)
			},
		}
	})
}
