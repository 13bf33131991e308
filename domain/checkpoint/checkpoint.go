package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/executor-dev/executor/domain/errcode"
)

// Sentinel errors; match them with errors.Is.
var (
	ErrNotFound   = errcode.WithDetail(errcode.NotFound, "checkpoint: not found", "the task has no checkpoint yet")
	ErrOutOfOrder = errors.New("checkpoint: stage recorded out of order")
	ErrInvalid    = errors.New("checkpoint: invalid")
)

// Checkpoint records the stages a task has completed and their outputs.
type Checkpoint struct {
	taskID          string
	completedStages []string
	outputs         []json.RawMessage // outputs[i] is the output of completedStages[i]
	savedAt         time.Time
	fence           uint64
	progress        *Progress // of the stage at Next(), nil when it saved none
}

// Progress is how far the stage at Next() got within the task: what its handler saved
// (stage.Progress) before it completed, for its next attempt to go on from.
type Progress struct {
	Stage string          `json:"stage"`
	Data  json.RawMessage `json:"data"`
}

// New returns an empty checkpoint (nothing completed) for taskID.
func New(taskID string) *Checkpoint {
	return &Checkpoint{taskID: taskID}
}

// TaskID returns the task the checkpoint belongs to.
func (c *Checkpoint) TaskID() string { return c.taskID }

// LastCompletedStageIndex returns the index of the last completed stage, -1 when none.
func (c *Checkpoint) LastCompletedStageIndex() int { return len(c.completedStages) - 1 }

// Next returns the index of the stage a retry from this checkpoint starts at.
func (c *Checkpoint) Next() int { return len(c.completedStages) }

// CompletedStages returns the names of the completed stages, in order.
func (c *Checkpoint) CompletedStages() []string { return append([]string(nil), c.completedStages...) }

// Output returns the output of a completed stage.
func (c *Checkpoint) Output(stage string) (json.RawMessage, bool) {
	for i, name := range c.completedStages {
		if name == stage {
			return c.outputs[i], true
		}
	}
	return nil, false
}

// Outputs returns each completed stage's output decoded, by stage name: what templates see.
// A stage without output (null) reads as an empty object, as it does when templates are
// checked at submission, so `index .Outputs "stage" "key"` renders instead of failing.
func (c *Checkpoint) Outputs() map[string]any {
	out := make(map[string]any, len(c.outputs))
	for i, raw := range c.outputs {
		name := c.completedStages[i]
		var v any
		if len(raw) > 0 && json.Unmarshal(raw, &v) != nil {
			v = string(raw)
		}
		if v == nil {
			v = map[string]any{}
		}
		out[name] = v
	}
	return out
}

// Progress returns what stage (the stage at Next()) saved of its progress, nil when nothing.
func (c *Checkpoint) Progress(stage string) json.RawMessage {
	if c.progress == nil || c.progress.Stage != stage {
		return nil
	}
	return c.progress.Data
}

// InProgress returns the progress the checkpoint holds, of whichever stage saved it.
func (c *Checkpoint) InProgress() (Progress, bool) {
	if c.progress == nil {
		return Progress{}, false
	}
	return *c.progress, true
}

// WithProgress returns a copy of the checkpoint holding data as the progress of stage, the
// stage at Next() (nil data forgets it): the checkpoint a stage's partial progress is saved
// with. It fails with ErrInvalid when data is not JSON or stage is one already completed.
func (c *Checkpoint) WithProgress(stage string, data json.RawMessage, epoch uint64, now time.Time) (*Checkpoint, error) {
	if data != nil && !json.Valid(data) {
		return nil, fmt.Errorf("%w: progress of %s is not JSON", ErrInvalid, stage)
	}
	if stage == "" || slices.Contains(c.completedStages, stage) {
		return nil, fmt.Errorf("%w: progress of stage %q, which is not the next one", ErrInvalid, stage)
	}
	cp := c.Clone()
	cp.progress = nil
	if data != nil {
		cp.progress = &Progress{Stage: stage, Data: slices.Clone(data)}
	}
	cp.fence = max(cp.fence, epoch)
	cp.savedAt = now.UTC()
	return cp, nil
}

// OutputBytes returns the size of the completed stages' outputs, together.
func (c *Checkpoint) OutputBytes() int {
	n := 0
	for _, out := range c.outputs {
		n += len(out)
	}
	return n
}

// SavedAt returns when the checkpoint last changed.
func (c *Checkpoint) SavedAt() time.Time { return c.savedAt }

// Fence returns the fence epoch of the run that wrote the checkpoint.
func (c *Checkpoint) Fence() uint64 { return c.fence }

// Record marks stage index (named name) completed with its output. index must be the next one.
func (c *Checkpoint) Record(index int, name string, output json.RawMessage, epoch uint64, now time.Time) error {
	if index != len(c.completedStages) {
		return fmt.Errorf("%w: stage %d after %d", ErrOutOfOrder, index, c.LastCompletedStageIndex())
	}
	if output != nil && !json.Valid(output) {
		return fmt.Errorf("%w: output of %s is not JSON", ErrInvalid, name)
	}
	c.completedStages = append(c.completedStages, name)
	c.outputs = append(c.outputs, output)
	c.progress = nil
	c.fence = max(c.fence, epoch)
	c.savedAt = now.UTC()
	return nil
}

// Undo records that stage index, the last completed (named name), is undone by a rollback:
// it is no longer completed, and its output goes with it (an undo of an earlier stage reads
// the outputs of the stages still applied). The progress an undo saved goes too.
func (c *Checkpoint) Undo(index int, name string, epoch uint64, now time.Time) error {
	n := len(c.completedStages)
	if index != n-1 || c.completedStages[index] != name {
		return fmt.Errorf("%w: undo of stage %d (%s), the last completed is %d", ErrOutOfOrder, index, name, n-1)
	}
	// Capped: Clone shares the arrays, and a later Record must not write into another's.
	c.completedStages, c.outputs = c.completedStages[:n-1:n-1], c.outputs[:n-1:n-1]
	c.progress = nil
	c.fence = max(c.fence, epoch)
	c.savedAt = now.UTC()
	return nil
}

// Reset forgets every completed stage: a retry from the start.
func (c *Checkpoint) Reset(epoch uint64, now time.Time) {
	c.completedStages, c.outputs, c.progress = nil, nil, nil
	c.fence = max(c.fence, epoch)
	c.savedAt = now.UTC()
}

// State is a checkpoint's persisted form.
type State struct {
	TaskID          string                     `json:"taskId"`
	LastCompleted   int                        `json:"lastCompletedStageIndex"`
	CompletedStages []string                   `json:"completedStages"`
	ContextData     map[string]json.RawMessage `json:"contextData"`
	SavedAt         time.Time                  `json:"savedAt"`
	Fence           uint64                     `json:"fence"`
	Progress        *Progress                  `json:"progress,omitempty"`
}

// State returns the checkpoint's persisted form (copies).
func (c *Checkpoint) State() State {
	data := make(map[string]json.RawMessage, len(c.outputs))
	for i, out := range c.outputs {
		data[c.completedStages[i]] = out
	}
	var progress *Progress
	if c.progress != nil {
		progress = &Progress{Stage: c.progress.Stage, Data: slices.Clone(c.progress.Data)}
	}
	return State{
		TaskID: c.taskID, LastCompleted: c.LastCompletedStageIndex(),
		CompletedStages: c.CompletedStages(), ContextData: data, SavedAt: c.savedAt, Fence: c.fence,
		Progress: progress,
	}
}

// Load rebuilds a checkpoint from persisted state, refusing state that breaks an invariant.
func Load(s State) (*Checkpoint, error) {
	if s.TaskID == "" {
		return nil, fmt.Errorf("%w: no task id", ErrInvalid)
	}
	if s.LastCompleted != len(s.CompletedStages)-1 {
		return nil, fmt.Errorf("%w: %s: last completed %d but %d stages completed",
			ErrInvalid, s.TaskID, s.LastCompleted, len(s.CompletedStages))
	}
	outputs := make([]json.RawMessage, len(s.CompletedStages))
	for i, name := range s.CompletedStages {
		out, ok := s.ContextData[name]
		if !ok {
			return nil, fmt.Errorf("%w: %s: no output for completed stage %s", ErrInvalid, s.TaskID, name)
		}
		outputs[i] = out
	}
	var progress *Progress
	if p := s.Progress; p != nil {
		if p.Stage == "" || slices.Contains(s.CompletedStages, p.Stage) || !json.Valid(p.Data) {
			return nil, fmt.Errorf("%w: %s: progress of stage %q", ErrInvalid, s.TaskID, p.Stage)
		}
		progress = &Progress{Stage: p.Stage, Data: slices.Clone(p.Data)}
	}
	return &Checkpoint{
		taskID: s.TaskID, completedStages: append([]string(nil), s.CompletedStages...),
		outputs: outputs, savedAt: s.SavedAt, fence: s.Fence, progress: progress,
	}, nil
}

// Clone returns an independent copy of the checkpoint without re-checking it: a store keeps
// one and hands out clones. The completed stages and their outputs are shared, capped at
// their number: a checkpoint only appends to them (Reset starts new ones), so an append on
// either side moves to a new array and never writes into the other's.
func (c *Checkpoint) Clone() *Checkpoint {
	n := len(c.completedStages)
	cp := *c
	cp.completedStages = c.completedStages[:n:n]
	cp.outputs = c.outputs[:n:n]
	return &cp
}

// Store reads checkpoints. They are written together with their task (task.Repository.Save).
type Store interface {
	// Checkpoint returns the task's checkpoint, or ErrNotFound when none was saved.
	Checkpoint(ctx context.Context, taskID string) (*Checkpoint, error)
}
