package task

import "time"

// Row is what a plan's summary and its filtered task listing need of one task, kept per
// plan by the stores with every write of the task (a plan's index), so that neither reads the
// plan's every task.
type Row struct {
	ID       string
	TenantID string
	Status   Status
	// Stage is the current stage's index: the next to run, len(stages) once every stage
	// completed.
	Stage int
	// Class is the failure class of the task's last error ("" when it has none, and for a
	// SKIPPED task: an operator accepted it, it counts in no failure class).
	Class string
	// Message is the last error's message ("" when none): the sample of its class.
	Message string
	// Since is when the task entered its status at its stage: the slowest RUNNING rows are the
	// oldest.
	Since time.Time
	// Fence and Version order the writes of the task: an index keeps a row only over an
	// older one (a write that reaches it late changes nothing).
	Fence, Version uint64
}

// RowOf is t's row, Since its last change. An index keeps the Since of the row it replaces
// when the status and the stage are the same (Newer).
func RowOf(t *Task) Row {
	r := Row{ID: t.id, TenantID: t.tenantID, Status: t.status, Stage: t.currentStage,
		Since: t.updatedAt, Fence: t.fence, Version: t.version}
	if t.lastError != nil && t.status != Skipped {
		r.Class, r.Message = string(t.lastError.Class), t.lastError.Message
	}
	return r
}

// Newer reports whether r is a later write of the task than old (a higher fence epoch, or the
// same epoch at a higher version).
func (r Row) Newer(old Row) bool {
	return r.Fence > old.Fence || (r.Fence == old.Fence && r.Version > old.Version)
}

// SameStep reports whether r and old have the same status at the same stage: the newer keeps
// the older's Since.
func (r Row) SameStep(old Row) bool { return r.Status == old.Status && r.Stage == old.Stage }
