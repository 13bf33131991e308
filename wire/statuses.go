package wire

// TaskStatusRule is what a task's status means and allows (GET /v1/task-statuses): the rules
// the executor itself follows, so that a client (the console) offers what the executor
// accepts instead of keeping its own lists.
type TaskStatusRule struct {
	Status      string `json:"status"`
	Terminal    bool   `json:"terminal"`    // ended for good: its tenant may take a new plan
	Settled     bool   `json:"settled"`     // no longer holds its plan open
	AtRest      bool   `json:"atRest"`      // stays so until an operator acts
	Retryable   bool   `json:"retryable"`   // a retry may start it again
	Cancellable bool   `json:"cancellable"` // an operator may cancel it
	Undoable    bool   `json:"undoable"`    // an operator may roll it back
	Skippable   bool   `json:"skippable"`   // an operator may skip it
}

// TaskStatusRules lists every task status, in display order, with its rules.
type TaskStatusRules struct {
	Statuses []TaskStatusRule `json:"statuses"`
}
