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
	StageIndex int       `json:"i"`
	Stage      string    `json:"s"`
	Reason     string    `json:"r"`
	Message    string    `json:"m,omitempty"`
	Since      time.Time `json:"t"`
}

// verdictJSON is a task's latest gate decision as stored in field "verdict" ("" when none).
type verdictJSON struct {
	StageIndex int       `json:"i"`
	Run        int       `json:"r"`
	Approved   bool      `json:"a"`
	Comment    string    `json:"c,omitempty"`
	DecidedAt  time.Time `json:"t"`
}

// encGate encodes a task's wait and verdict.
func encGate(t *task.Task) (wait, verdict string, err error) {
	if w := t.Wait(); w != nil {
		b, err := json.Marshal(waitJSON(*w))
		if err != nil {
			return "", "", err
		}
		wait = string(b)
	}
	if v := t.Verdict(); v != nil {
		b, err := json.Marshal(verdictJSON{StageIndex: v.StageIndex, Run: v.Run, Approved: v.Approved,
			Comment: v.Comment, DecidedAt: v.DecidedAt})
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
		tw := task.Wait(j)
		w = &tw
	}
	var v *task.Verdict
	if verdict != "" {
		var j verdictJSON
		if err := json.Unmarshal([]byte(verdict), &j); err != nil {
			return nil, nil, fmt.Errorf("verdict: %w", err)
		}
		v = &task.Verdict{StageIndex: j.StageIndex, Run: j.Run,
			Decision: stage.Decision{Approved: j.Approved, Comment: j.Comment, DecidedAt: j.DecidedAt}}
	}
	return w, v, nil
}
