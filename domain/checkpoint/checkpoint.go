package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	c.fence = max(c.fence, epoch)
	c.savedAt = now.UTC()
	return nil
}

// Reset forgets every completed stage: a retry from the start.
func (c *Checkpoint) Reset(epoch uint64, now time.Time) {
	c.completedStages, c.outputs = nil, nil
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
}

// State returns the checkpoint's persisted form (copies).
func (c *Checkpoint) State() State {
	data := make(map[string]json.RawMessage, len(c.outputs))
	for i, out := range c.outputs {
		data[c.completedStages[i]] = out
	}
	return State{
		TaskID: c.taskID, LastCompleted: c.LastCompletedStageIndex(),
		CompletedStages: c.CompletedStages(), ContextData: data, SavedAt: c.savedAt, Fence: c.fence,
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
	return &Checkpoint{
		taskID: s.TaskID, completedStages: append([]string(nil), s.CompletedStages...),
		outputs: outputs, savedAt: s.SavedAt, fence: s.Fence,
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
