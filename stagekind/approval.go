package stagekind

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

// KindApproval is the kind name of Approval.
const KindApproval = "approval"

// ReasonApproval is the reason a task waiting at an approval gate gives (task.Wait.Reason).
const ReasonApproval = "approval"

// ErrRejected is matched (errors.Is) by the failure of an approval gate an operator rejected.
var ErrRejected = errors.New("rejected by an operator")

// rejectedMessage is a rejected gate's failure message. It never holds the operator's
// comment, which is kept with the task's decision only: failure messages are logged.
const rejectedMessage = "rejected by an operator (the comment, if any, is on the task's decision)"

// Approval is the approval kind: a manual gate. Until an operator decides (POST
// /v1/tenants/{tenantId}/approve or /reject, `executor approve|reject --tenant`, the console)
// the task is WAITING and holds neither a worker nor its tenant's lease. An approval passes
// the stage, whose output is {"approved": true, "comment": ..., "decidedAt": ...}; a rejection
// fails it permanently. The comment is kept with the task's decision, never in the failure
// message, which the orchestrator logs.
//
// Params: message (optional string): what the approver is asked, shown with the waiting task.
type Approval struct{}

// approvalOutput is the output of an approved gate.
type approvalOutput struct {
	Approved  bool      `json:"approved"`
	Comment   string    `json:"comment,omitempty"`
	DecidedAt time.Time `json:"decidedAt"`
	By        string    `json:"by,omitempty"` // who decided (the token's holder)
}

var _ stage.Gate = Approval{}

// Gate marks the approval kind as a gate: its stages take an approvers rule.
func (Approval) Gate() {}

// ValidateParams accepts only an optional string message.
func (Approval) ValidateParams(params map[string]any) error {
	if err := checkKnownParams(params, "message"); err != nil {
		return err
	}
	if m, ok := params["message"]; ok {
		if _, isString := m.(string); !isString {
			return paramError("message", "must be a string")
		}
	}
	return nil
}

// Run waits (stage.Await) until the request carries a decision, then passes or fails on it.
func (a Approval) Run(ctx context.Context, req stage.Request) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := a.ValidateParams(req.Params); err != nil {
		return nil, invalidParams(err)
	}
	d := req.Decision
	if d == nil {
		message, _ := req.Params["message"].(string)
		return nil, stage.Await(ReasonApproval, message)
	}
	if !d.Approved {
		// The comment stays on the task's decision (the API shows it there): a failure message
		// is logged, and comments are not.
		return nil, &stage.Error{Class: stage.ClassPermanent, Message: rejectedMessage, Err: ErrRejected}
	}
	return json.Marshal(approvalOutput{Approved: true, Comment: d.Comment, DecidedAt: d.DecidedAt, By: d.By})
}
