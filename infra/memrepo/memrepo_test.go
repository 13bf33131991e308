package memrepo_test

import (
	"testing"

	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/infra/repotest"
)

func TestContract(t *testing.T) {
	t.Parallel()
	repotest.Run(t, func(*testing.T) repotest.Store {
		db := memrepo.New()
		return repotest.Store{Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Index: db.Tasks(), Transcripts: db.Transcripts(), Audit: db.Audit()}
	})
}
