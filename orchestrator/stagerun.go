package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// stageResult is how a stage's run ended: succeeded (out, and the last attempt's entry),
// failed (failure, and the last attempt's entry if one ran), or waiting at a gate (wait).
type stageResult struct {
	out     json.RawMessage
	entry   *task.Attempt
	failure *task.Failure
	wait    *stage.AwaitError
}

// runStage runs stage i (its undo, with undo) with its retry policy. Failed attempts that will be retried are
// recorded here; the last attempt's entry is returned for the caller to record with the
// transition it causes (one write per transition). A gate that waits for an operator's
// decision returns no entry and no failure, but its *stage.AwaitError.
func (run *taskRun) runStage(ph *planHere, i int, undo bool, cp *checkpoint.Checkpoint, log *slog.Logger) stageResult {
	spec, callName := run.cur().Stages()[i], run.cur().Stages()[i].Name
	if undo {
		spec, callName = *spec.Undo, stage.UndoPrefix+spec.Name
	}
	fail := func(entry *task.Attempt, class stage.Class, msg string, code int) stageResult {
		attempt := 0
		if entry != nil {
			attempt = entry.Attempt
			run.o.observeAttempt(spec.Kind, entry)
		}
		return stageResult{entry: entry, failure: &task.Failure{Stage: callName, Attempt: attempt, Class: class, Message: msg, Code: code}}
	}
	h, ok := run.o.kinds.Handler(spec.Kind)
	if !ok {
		return fail(nil, stage.ClassPermanent, "unknown stage kind "+spec.Kind, 0)
	}
	var outputs map[string]any
	templated := spec.Templated()
	if templated { // only templates read earlier outputs: decode them for those alone
		outputs = cp.Outputs()
	}
	keyRun := inDoubtKeyRun(run.cur(), i)
	red := &stage.Redactor{} // the secrets the params read: hidden in what the attempts leave behind
	progress := &stageProgress{run: run, cp: cp, stage: callName, red: red, saved: cp.Progress(callName)}
	for attempt := 1; ; attempt++ {
		entry := &task.Attempt{StageIndex: i, Stage: spec.Name, Run: run.attempt, Attempt: attempt, StartedAt: run.o.now(), Undo: undo}
		data := stage.Data{
			TenantID: run.tenantID, PlanID: run.planID, TaskID: run.id, Attempt: run.attempt,
			Params: run.cur().Params(), Outputs: outputs, ExecutorURL: run.o.cfg.ExecutorURL(), Secret: run.o.resolve(red),
		}
		params, err := spec.Params, error(nil) // without a template, the params as submitted (handlers only read them)
		if templated {
			params, err = ph.renderer.Render("params", spec.Params, data, stage.OptionsOf(h)...)
		}
		if err != nil {
			entry.EndedAt, entry.Outcome, entry.Class, entry.Error = run.o.now(), task.OutcomeFailed, stage.ClassPermanent, err.Error()
			return fail(entry, stage.ClassPermanent, err.Error(), 0)
		}
		var printed *stage.Transcript
		req := run.request(ph, i, callName, attempt, params, data, progress)
		req.KeyRun, req.Transcribe = keyRun, func(t stage.Transcript) { printed = &t }
		out, err := callStage(run.ctx, h, spec.Timeout, req, run.outputRoom(cp))
		entry.EndedAt = run.o.now()
		run.keepTranscript(*entry, red, printed, log)
		if err == nil {
			entry.Outcome = task.OutcomeSucceeded
			run.o.observeAttempt(spec.Kind, entry)
			return stageResult{out: red.Output(out), entry: entry}
		}
		if aw := (*stage.AwaitError)(nil); errors.As(err, &aw) && run.ctx.Err() == nil {
			return stageResult{wait: aw}
		}
		se := stage.AsError(err)
		se.Message = red.Text(se.Message)
		entry.Outcome, entry.Class, entry.Error, entry.Code = task.OutcomeFailed, se.Class, se.Message, se.Code
		if run.ctx.Err() != nil { // cut short by the run's end, not ended by itself: interrupted
			f := run.causeFailure(callName)
			entry.Outcome, entry.Class, entry.Error, entry.Code = task.OutcomeInterrupted, f.Class, f.Message, 0
			return fail(entry, f.Class, f.Message, 0)
		}
		if !se.Class.Retryable() || attempt >= spec.Retry.MaxAttempts {
			return fail(entry, se.Class, se.Message, se.Code)
		}
		run.o.observeRetry(spec.Kind, entry)
		entry.Backoff = spec.Retry.Backoff(attempt, se.RetryAfter, run.o.cfg.Rand)
		if capped := cappedRetryAfter(se.RetryAfter); capped != "" {
			entry.Error += " (" + capped + ")"
		}
		log.Warn("stage attempt failed; retrying", "stage_attempt", attempt, "class", se.Class, "code", se.Code,
			"err", entry.Error, "retry_in", entry.Backoff.String())
		if err := run.commit(nil, func(t *task.Task) error { return t.Record(*entry) }); err != nil {
			log.Error("record attempt", "err", err)
		}
		if !sleep(run.ctx, entry.Backoff) {
			f := run.causeFailure(callName)
			return fail(nil, f.Class, f.Message, 0)
		}
	}
}

// request is the stage.Request of an attempt of stage i (called name: its undo's is
// "undo:<stage>") with params, rendered from data (which
// its late params are rendered from too, with the response), saving its progress through
// progress.
func (run *taskRun) request(ph *planHere, i int, name string, attempt int, params map[string]any, data stage.Data, progress *stageProgress) stage.Request {
	return stage.Request{
		PlanID: run.planID, TaskID: run.id, TenantID: run.tenantID, Stage: name,
		StageIndex: i, Run: run.attempt, Attempt: attempt, Params: params, Decision: run.cur().Decision(),
		Fence: run.cur().Fence(), Progress: progress,
		Late: func(field, text string, response any) (string, error) {
			data.Response = response
			return ph.renderer.RenderLate("params."+field, text, data)
		},
	}
}

// inDoubtKeyRun is the run whose Idempotency-Key every attempt of stage i sends in this run
// (stage.Request.KeyRun): when the stage's latest attempt, over all runs, is in doubt (a lost
// run may have been inside the call), that attempt's run, so that a target honouring the key
// does the work once; 0 (the run's own key) otherwise. It is read once, when the stage starts:
// the run's own attempts of the stage keep the key it chose.
func inDoubtKeyRun(t *task.Task, i int) int {
	if a, ok := t.InDoubt(i); ok {
		return a.Run
	}
	return 0
}

// cappedRetryAfter says, when a failure's Retry-After hint is above stage.MaxRetryAfter (the
// wait is capped to it), by how much: "Retry-After 3600s capped to 10m0s"; "" otherwise.
func cappedRetryAfter(hint time.Duration) string {
	if hint <= stage.MaxRetryAfter {
		return ""
	}
	return fmt.Sprintf("Retry-After %.0fs capped to %s", hint.Seconds(), stage.MaxRetryAfter)
}

// callStage runs one handler call under the stage's timeout. A timeout of the stage (not of the
// run) is reported as a timeout, whatever the handler returned; an output larger than room
// bytes fails permanently (room 0: no bound).
func callStage(ctx context.Context, h stage.Handler, timeout time.Duration, req stage.Request, room int) (json.RawMessage, error) {
	sctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	out, err := h.Run(sctx, req)
	if err != nil && ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded) {
		return nil, &stage.Error{Class: stage.ClassTimeout, Message: "stage timed out after " + timeout.String(), Err: err}
	}
	if err == nil && out != nil && !json.Valid(out) {
		return nil, stage.Permanent(errors.New("stage output is not valid JSON"))
	}
	if err == nil && room > 0 && len(out) > room {
		return nil, stage.Permanent(fmt.Errorf("%w: %d bytes, %d allowed (serve --max-output-bytes per stage, --max-task-output-bytes per task)",
			errOutputTooLarge, len(out), room))
	}
	return out, err
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
