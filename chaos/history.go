//go:build chaos

package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"
)

// FaultRecord is one injected fault and its window: from the injection to its end (the
// SIGCONT, the restart, the restore), before the recovery wait.
type FaultRecord struct {
	Kind   FaultKind `json:"kind"`
	Target string    `json:"target"` // the executor it hit; "redis" for Redis's faults
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	Note   string    `json:"note,omitempty"`
}

// CommandRecord is one operator command as sent and answered. Acked: a 2xx answer.
type CommandRecord struct {
	Kind     string    `json:"kind"` // cancel, plan-resume, plan-retry, tenant-resume
	Tenant   string    `json:"tenant,omitempty"`
	PlanID   string    `json:"planId,omitempty"`
	TaskID   string    `json:"taskId,omitempty"` // the task the answer names (cancel), else the task aimed at
	Via      string    `json:"via"`
	Sent     time.Time `json:"sent"`     // the first try
	Answered time.Time `json:"answered"` // the answer that decided it
	Code     int       `json:"code"`     // that answer's status, 0 for none
	Status   string    `json:"status,omitempty"`
	Tries    int       `json:"tries"`
	Acked    bool      `json:"acked"`
	Detail   string    `json:"detail,omitempty"`
	// During: sent by the operator acting while faults are injected (else after them, or the
	// workload's cancel).
	During bool `json:"during,omitempty"`
}

// RetryRecord is one task an operator's acknowledged retry gave a new run (or, Undecided, one
// a retry may have). MinAttempt is the attempt the task must reach at least (its attempt when
// it was retried, + 1).
type RetryRecord struct {
	Tenant     string    `json:"tenant"`
	PlanID     string    `json:"planId"`
	TaskID     string    `json:"taskId"`
	Sent       time.Time `json:"sent"`
	Acked      time.Time `json:"acked"`
	MinAttempt int       `json:"minAttempt"`
	Via        string    `json:"via"`
	Kind       string    `json:"kind"`             // plan-retry (bulk) or tenant-retry
	During     bool      `json:"during,omitempty"` // while faults were injected
	// Undecided: no answer decided the retry (a try got none, or a 503: it may have taken
	// effect on an executor killed or cut off before it answered). Check 2 counts it as an
	// operator retry; check 3 does not check it (Acked is zero).
	Undecided bool `json:"undecided,omitempty"`
}

// SubmissionRecord is one plan submission: every try with its Idempotency-Key until an
// answer decided it.
type SubmissionRecord struct {
	Key     string    `json:"key"`
	PlanID  string    `json:"planId,omitempty"`
	Tenants []string  `json:"tenants"`
	Sent    time.Time `json:"sent"`
	Acked   time.Time `json:"acked,omitempty"`
	Code    int       `json:"code"`
	Tries   int       `json:"tries"`
	Via     string    `json:"via"`
	Detail  string    `json:"detail,omitempty"`
}

// ExitRecord is an executor process that exited without the harness killing it.
type ExitRecord struct {
	Name        string    `json:"name"`
	Incarnation int       `json:"incarnation"`
	At          time.Time `json:"at"`
	Err         string    `json:"err"`
	LogPath     string    `json:"logPath"`
}

// Note is a line of the run's timeline.
type Note struct {
	At   time.Time `json:"at"`
	Text string    `json:"text"`
}

// History records what the harness did and saw, for the checks and the report. Safe for
// concurrent use.
type History struct {
	mu          sync.Mutex
	Start       time.Time
	Faults      []FaultRecord
	Commands    []CommandRecord
	Retries     []RetryRecord
	Submissions []SubmissionRecord
	Exits       []ExitRecord
	Notes       []Note
	// ServerErrors are the API's 5xx answers other than 503 (a 500 is a server fault).
	ServerErrors []string
}

// NewHistory starts a history now.
func NewHistory() *History { return &History{Start: time.Now()} }

// AddFault records a fault.
func (h *History) AddFault(f FaultRecord) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Faults = append(h.Faults, f)
}

// AddCommand records an operator command.
func (h *History) AddCommand(c CommandRecord) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Commands = append(h.Commands, c)
}

// AddRetry records a task an acknowledged retry gave a new run.
func (h *History) AddRetry(r RetryRecord) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Retries = append(h.Retries, r)
}

// AddSubmission records a submission.
func (h *History) AddSubmission(s SubmissionRecord) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Submissions = append(h.Submissions, s)
}

// AddExit records an executor's unexpected exit.
func (h *History) AddExit(e ExitRecord) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Exits = append(h.Exits, e)
}

// AddServerError records an API answer 5xx other than 503.
func (h *History) AddServerError(a Answer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ServerErrors = append(h.ServerErrors, fmt.Sprintf("%s %s %s via %s: %s",
		a.Got.Format("15:04:05.000"), a.Method, a.Path, a.Via, a.Problem()))
}

// Notef adds a line to the timeline.
func (h *History) Notef(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Notes = append(h.Notes, Note{At: time.Now(), Text: fmt.Sprintf(format, args...)})
}

// Copy returns a copy safe to read while the run goes on.
func (h *History) Copy() *History {
	h.mu.Lock()
	defer h.mu.Unlock()
	return &History{
		Start:       h.Start,
		Faults:      append([]FaultRecord(nil), h.Faults...),
		Commands:    append([]CommandRecord(nil), h.Commands...),
		Retries:     append([]RetryRecord(nil), h.Retries...),
		Submissions: append([]SubmissionRecord(nil), h.Submissions...),
		Exits:       append([]ExitRecord(nil), h.Exits...),
		Notes:       append([]Note(nil), h.Notes...),

		ServerErrors: append([]string(nil), h.ServerErrors...),
	}
}

// FaultAt returns the faults whose window (widened by margin) contains at.
func (h *History) FaultAt(at time.Time, margin time.Duration) []FaultRecord {
	var out []FaultRecord
	for _, f := range h.Faults {
		end := f.End
		if end.IsZero() {
			end = time.Now()
		}
		if !at.Before(f.Start.Add(-margin)) && !at.After(end.Add(margin)) {
			out = append(out, f)
		}
	}
	return out
}

// RetriesOf returns the retries of tenant's task taskID, by time.
func (h *History) RetriesOf(taskID string) []RetryRecord {
	var out []RetryRecord
	for _, r := range h.Retries {
		if r.TaskID == taskID {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Sent.Before(out[j].Sent) })
	return out
}

// WriteJSON writes the history (and extra, e.g. the target's calls) to path.
func (h *History) WriteJSON(path string, extra map[string]any) error {
	c := h.Copy()
	doc := map[string]any{
		"start": c.Start, "faults": c.Faults, "commands": c.Commands, "retries": c.Retries,
		"submissions": c.Submissions, "exits": c.Exits, "notes": c.Notes,
		"serverErrors": c.ServerErrors,
	}
	for k, v := range extra {
		doc[k] = v
	}
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}
