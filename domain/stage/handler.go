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
	// Decision is the operator's decision on this stage in this run, or nil while there is
	// none: a gate (see Await) waits until it is set.
	Decision *Decision
}

// IdempotencyKey identifies this stage in this run: plan/task/stage/run. It is the same on
// every attempt of the stage within the run, so that a target can recognise a retried
// request; a new run (an operator's retry of the task) gets a new key.
func (r Request) IdempotencyKey() string {
	return r.PlanID + "/" + r.TaskID + "/" + r.Stage + "/" + strconv.Itoa(r.Run)
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

// ParamValidator is implemented by handlers that check their rendered params at submission,
// so that a plan that cannot run is rejected before anything is created.
type ParamValidator interface {
	ValidateParams(params map[string]any) error
}
