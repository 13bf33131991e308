package memrepo

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// DB is the shared in-memory state behind the repositories. Safe for concurrent use.
type DB struct {
	mu      sync.RWMutex
	plans   map[string]*plan.Plan // stored copies: Plan hands out clones
	planIDs []string              // sorted ascending; ULIDs sort by creation time
	idem    map[string]string
	tasks   map[string]*task.Task // stored copies: reads hand out clones
	tenants map[string]string
	ckpts   map[string]*checkpoint.Checkpoint               // stored copies: reads hand out clones
	outs    map[string]map[task.AttemptKey]stage.Transcript // by task id: what its attempts printed (transcripts.go)
	bound   *bound                                          // nil: everything is kept (New); see NewMirror
	indexes map[string]*planIndex                           // by plan id: its tasks' rows and summary (index.go)
	noIndex bool                                            // indexes stay empty (MirrorOptions.NoIndex)
	expiry  *expiry                                         // nil: ended plans are kept (New); see NewStore
	clock   func() time.Time                                // the time of ends and sweeps, with expiry
	forgot  int                                             // tasks forgotten since the maps were last compacted (forget.go)
	sweeper sweeper                                         // the background sweep (sweep.go)
	audit   *AuditLog                                       // the operators' actions (audit.go), forgotten with their plan
	// deliveries are where the plans' notifications stand (notify.go), forgotten with their plan.
	deliveries *Deliveries
}

// New returns an empty database that keeps everything stored in it, for as long as it lives;
// a DB made by NewStore forgets ended plans after a retention, as Redis does.
func New() *DB {
	db := &DB{
		plans:   map[string]*plan.Plan{},
		idem:    map[string]string{},
		tasks:   map[string]*task.Task{},
		tenants: map[string]string{},
		ckpts:   map[string]*checkpoint.Checkpoint{},
		outs:    map[string]map[task.AttemptKey]stage.Transcript{},
		indexes: map[string]*planIndex{},
		audit:   NewAuditLog(),
	}
	db.deliveries = newDeliveries(db)
	return db
}

// Plans returns the plan repository.
func (db *DB) Plans() *PlanRepo { return &PlanRepo{db: db} }

// Tasks returns the task repository.
func (db *DB) Tasks() *TaskRepo { return &TaskRepo{db: db} }

// Checkpoints returns the checkpoint store.
func (db *DB) Checkpoints() *CheckpointStore { return &CheckpointStore{db: db} }

// CreatePlan stores a new plan with its tasks as one step: nothing is stored when a tenant is
// busy (*task.BusyError) or an id exists.
func (db *DB) CreatePlan(_ context.Context, p *plan.Plan, tasks []*task.Task) error {
	db.mu.Lock()
	defer db.unlock()
	if _, ok := db.plans[p.ID()]; ok {
		return fmt.Errorf("memrepo: plan %s exists", p.ID())
	}
	if err := db.createTasks(tasks); err != nil {
		return err
	}
	db.putPlan(p, true)
	return nil
}
