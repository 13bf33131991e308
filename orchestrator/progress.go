package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// stageProgress is a stage's stage.Progress in a run: what its attempts save of how far they
// got is written into the task's checkpoint (checkpoint.Checkpoint.WithProgress), with the
// task, as one fenced compare-and-set like the run's other writes. The run's own copy of the
// checkpoint (cp) is not changed: the stage's completion replaces the stored one, progress
// and all, and a failure leaves it for a retry from the checkpoint.
type stageProgress struct {
	run   *taskRun
	cp    *checkpoint.Checkpoint // the checkpoint the run resumed from, with the stages it completed since
	stage string
	red   *stage.Redactor

	mu    sync.Mutex
	saved json.RawMessage
}

var _ stage.Progress = (*stageProgress)(nil)

// Saved returns the progress saved last: by an earlier attempt of this run, or else the one
// the checkpoint held when the stage started.
func (p *stageProgress) Saved() json.RawMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.saved
}

// Save writes data (its secrets hidden) as the stage's progress in the task's checkpoint, at
// most Config.MaxOutputBytes (a larger one fails the attempt permanently). It
// is written whatever the attempt's context (a run always records what it did; the write is
// bounded by the lease as the run's writes are), and fails when the run may no longer write
// (lease lost, fenced, the task ended by an operator).
func (p *stageProgress) Save(_ context.Context, data json.RawMessage) error {
	if data != nil {
		data = p.red.Output(data)
	}
	if limit := p.run.o.cfg.MaxOutputBytes; len(data) > limit { // it lives in the checkpoint, like an output
		return stage.Permanent(fmt.Errorf("%w: the progress of stage %s is %d bytes, %d allowed (serve --max-output-bytes)",
			errOutputTooLarge, p.stage, len(data), limit))
	}
	next, err := p.cp.WithProgress(p.stage, data, p.run.cur().Fence(), p.run.o.now())
	if err != nil {
		return stage.Permanent(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	err = p.run.commitAs(next, func(t *task.Task) error { return t.Beat(p.run.o.now()) }, p.run.o.tasks.Save)
	if err != nil {
		return fmt.Errorf("orchestrator: save the progress of stage %s: %w", p.stage, err)
	}
	p.saved = data
	return nil
}
