package redisrepo

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// waitJSON is a WAITING task's wait as stored in field "wait" ("" when the task does not wait).
type waitJSON struct {
	StageIndex int            `json:"i"`
	Stage      string         `json:"s"`
	Reason     string         `json:"r"`
	Message    string         `json:"m,omitempty"`
	Since      time.Time      `json:"t"`
	Approvals  []decisionJSON `json:"a,omitempty"` // the approvals given so far, when the gate asks for several
}

// decisionJSON is one operator's decision.
type decisionJSON struct {
	Approved  bool      `json:"a"`
	Comment   string    `json:"c,omitempty"`
	DecidedAt time.Time `json:"t"`
	By        string    `json:"b,omitempty"` // absent in decisions recorded before actors
	Role      string    `json:"o,omitempty"`
}

// verdictJSON is a task's latest gate decision as stored in field "verdict" ("" when none).
type verdictJSON struct {
	StageIndex int `json:"i"`
	Run        int `json:"r"`
	decisionJSON
	Earlier []decisionJSON `json:"e,omitempty"`
}

func encDecision(d stage.Decision) decisionJSON {
	return decisionJSON{Approved: d.Approved, Comment: d.Comment, DecidedAt: d.DecidedAt, By: d.By, Role: d.Role}
}

func decDecision(j decisionJSON) stage.Decision {
	return stage.Decision{Approved: j.Approved, Comment: j.Comment, DecidedAt: j.DecidedAt, By: j.By, Role: j.Role}
}

func encDecisions(ds []stage.Decision) []decisionJSON {
	if len(ds) == 0 {
		return nil
	}
	out := make([]decisionJSON, len(ds))
	for i, d := range ds {
		out[i] = encDecision(d)
	}
	return out
}

func decDecisions(js []decisionJSON) []stage.Decision {
	if len(js) == 0 {
		return nil
	}
	out := make([]stage.Decision, len(js))
	for i, j := range js {
		out[i] = decDecision(j)
	}
	return out
}

// encGate encodes a task's wait and verdict.
func encGate(t *task.Task) (wait, verdict string, err error) {
	if w := t.Wait(); w != nil {
		b, err := json.Marshal(waitJSON{StageIndex: w.StageIndex, Stage: w.Stage, Reason: w.Reason, Message: w.Message,
			Since: w.Since, Approvals: encDecisions(w.Approvals)})
		if err != nil {
			return "", "", err
		}
		wait = string(b)
	}
	if v := t.Verdict(); v != nil {
		b, err := json.Marshal(verdictJSON{StageIndex: v.StageIndex, Run: v.Run, decisionJSON: encDecision(v.Decision),
			Earlier: encDecisions(v.Earlier)})
		if err != nil {
			return "", "", err
		}
		verdict = string(b)
	}
	return wait, verdict, nil
}

// decGate decodes the "wait" and "verdict" fields (absent in tasks written before gates).
func decGate(wait, verdict string) (*task.Wait, *task.Verdict, error) {
	var w *task.Wait
	if wait != "" {
		var j waitJSON
		if err := json.Unmarshal([]byte(wait), &j); err != nil {
			return nil, nil, fmt.Errorf("wait: %w", err)
		}
		w = &task.Wait{StageIndex: j.StageIndex, Stage: j.Stage, Reason: j.Reason, Message: j.Message, Since: j.Since,
			Approvals: decDecisions(j.Approvals)}
	}
	var v *task.Verdict
	if verdict != "" {
		var j verdictJSON
		if err := json.Unmarshal([]byte(verdict), &j); err != nil {
			return nil, nil, fmt.Errorf("verdict: %w", err)
		}
		v = &task.Verdict{StageIndex: j.StageIndex, Run: j.Run, Decision: decDecision(j.decisionJSON), Earlier: decDecisions(j.Earlier)}
	}
	return w, v, nil
}
