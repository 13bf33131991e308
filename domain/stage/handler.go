package stage

import (
	"context"
	"encoding/json"
	"strconv"
)

// Request is what a handler gets for one attempt of one stage of one task.
type Request struct {
	PlanID     string
	TaskID     string
	TenantID   string
	Stage      string
	StageIndex int
	Run        int            // the task's attempt: 1 on the first run, +1 per retry
	Attempt    int            // the stage's attempt within this run, from 1
	Params     map[string]any // rendered for this tenant and attempt
	// Fence is the tenant's fence epoch held by the run making this call: the epoch of the
	// tenant's task (TaskID), which every run of the task (and every takeover of it) bumps, so
	// a later run of the task always calls with a higher one. A target can refuse a caller
	// whose epoch is lower than one it has already seen for the task (a stale run, cut off or
	// paused, that has not noticed yet): the textbook fencing token. The epoch belongs to the
	// task: a tenant's next task (a new plan) starts again at 1, and its id, a ULID, sorts
	// after the previous one's (docs/runbook.md, "A target that refuses stale callers").
	// FenceToken is its portable form, which the http kind sends as the Executor-Fence header;
	// a custom kind passes it on to its target in whatever form the target reads. A run's
	// epoch is at least 1; 0 means the request does not come from a fenced run.
	Fence uint64
	// KeyRun, when not 0, is the run whose key IdempotencyKey sends instead of Run's: the run
	// of an earlier attempt of this stage whose outcome is in doubt (it may have reached the
	// target, and no run saw how it ended), so that a target that honours Idempotency-Key does
	// the work once across the retry. 0 means Run.
	KeyRun int
	// Decision is the operator's decision on this stage in this run, or nil while there is
	// none: a gate (see Await) waits until it is set.
	Decision *Decision
	// Progress is where an attempt checkpoints how far it got inside the stage (the http
	// kind's first response before it polls), so that the stage's next attempt, in this run
	// or in an operator's retry --from-checkpoint, goes on from there. Nil: nothing is kept
	// (SavedProgress is nil, SaveProgress does nothing).
	Progress Progress
	// Transcribe, when not nil, keeps what the attempt printed (the exec kind's stdout and
	// stderr tails) beside the attempt's ledger entry. A handler calls it at most once per
	// attempt, before it returns.
	Transcribe func(Transcript)
	// Late renders a param the renderer left for the attempt (see LateParamer) with the
	// stage's data and response, what the template reads as .Response. Nil: late params
	// cannot be rendered (the handler fails the attempt).
	Late func(field, text string, response any) (string, error)
}

// Progress is a stage's partial progress within its task, saved in the task's checkpoint
// (checkpoint.Checkpoint.Progress): kept until the stage completes, or the task is retried
// from its start.
type Progress interface {
	// Saved returns what the stage saved last, nil when it saved nothing.
	Saved() json.RawMessage
	// Save checkpoints data (JSON) as the stage's progress, as one write of the task fenced
	// like every other; nil forgets it. Once it returned nil, a retry from the checkpoint
	// gets data from Saved, whatever becomes of this run.
	Save(ctx context.Context, data json.RawMessage) error
}

// Transcript is the end of what one attempt printed: the last TranscriptMax bytes of its
// standard output and of its standard error.
type Transcript struct {
	Stdout string
	Stderr string
}

// TranscriptMax bounds each stream of a Transcript, in bytes.
const TranscriptMax = 4 << 10

// SavedProgress returns the stage's saved progress (Progress.Saved), nil without a Progress.
func (r Request) SavedProgress() json.RawMessage {
	if r.Progress == nil {
		return nil
	}
	return r.Progress.Saved()
}

// SaveProgress saves the stage's progress (Progress.Save); without a Progress it does
// nothing and returns nil.
func (r Request) SaveProgress(ctx context.Context, data json.RawMessage) error {
	if r.Progress == nil {
		return nil
	}
	return r.Progress.Save(ctx, data)
}

// KeepTranscript keeps what the attempt printed (Transcribe), when anything keeps it.
func (r Request) KeepTranscript(t Transcript) {
	if r.Transcribe != nil {
		r.Transcribe(t)
	}
}

// IdempotencyKey identifies this stage in this run: plan/task/stage/run. It is the same on
// every attempt of the stage within the run, so that a target can recognise a retried
// request; a new run (an operator's retry of the task) gets a new key, unless the stage's
// last attempt before it is in doubt: then KeyRun names that attempt's run, and the key is
// the one that attempt sent.
func (r Request) IdempotencyKey() string {
	run := r.Run
	if r.KeyRun != 0 {
		run = r.KeyRun
	}
	return r.PlanID + "/" + r.TaskID + "/" + r.Stage + "/" + strconv.Itoa(run)
}

// FenceToken is the fencing token of this call, "<tenantId>:<epoch>" (Fence in decimal): what
// the http kind sends as the Executor-Fence header. A tenant id has no colon, so the epoch is
// what follows the colon.
func (r Request) FenceToken() string {
	return r.TenantID + ":" + strconv.FormatUint(r.Fence, 10)
}

// Handler runs one attempt of a stage kind. It returns the stage's output (JSON, may be nil),
// or an error; a *Error carries its class, any other error is retryable. It must return
// promptly once ctx is done.
type Handler interface {
	Run(ctx context.Context, req Request) (json.RawMessage, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, req Request) (json.RawMessage, error)

// Run calls f.
func (f HandlerFunc) Run(ctx context.Context, req Request) (json.RawMessage, error) {
	return f(ctx, req)
}

// Gate is implemented by the handlers of gates, kinds that park the task until an
// operator decides (the approval kind): only their stages take an approvers rule
// (Spec.Approvers).
type Gate interface {
	Gate()
}

// ParamValidator is implemented by handlers that check their rendered params at submission,
// so that a plan that cannot run is rejected before anything is created.
type ParamValidator interface {
	ValidateParams(params map[string]any) error
}
