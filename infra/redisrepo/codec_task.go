package redisrepo

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// attemptJSON is one ledger entry as stored in the task hash's "ledger" field (short keys:
// the ledger is the largest part of a task).
type attemptJSON struct {
	StageIndex int    `json:"i"`
	Stage      string `json:"s"`
	Run        int    `json:"r"`
	Attempt    int    `json:"a"`
	StartedAt  int64  `json:"t0"` // unix µs
	EndedAt    int64  `json:"t1"` // unix µs
	Outcome    string `json:"o"`
	Class      string `json:"c,omitempty"`
	Error      string `json:"e,omitempty"`
	Code       int    `json:"h,omitempty"`
	BackoffMs  int64  `json:"b,omitempty"`
}

// taskFields is the whole task hash but its fence, which only bump_fence.lua changes.
func taskFields(t *task.Task) ([]any, error) {
	s := t.State()
	params, err := json.Marshal(s.Params)
	if err != nil {
		return nil, err
	}
	ledger := make([]attemptJSON, len(s.Ledger))
	for i, a := range s.Ledger {
		ledger[i] = attemptJSON{
			StageIndex: a.StageIndex, Stage: a.Stage, Run: a.Run, Attempt: a.Attempt,
			StartedAt: a.StartedAt.UnixMicro(), EndedAt: a.EndedAt.UnixMicro(), Outcome: string(a.Outcome),
			Class: string(a.Class), Error: a.Error, Code: a.Code, BackoffMs: a.Backoff.Milliseconds(),
		}
	}
	ledgerJSON, err := json.Marshal(ledger)
	if err != nil {
		return nil, err
	}
	lastError := ""
	if s.LastError != nil {
		b, err := json.Marshal(failureJSON(*s.LastError))
		if err != nil {
			return nil, err
		}
		lastError = string(b)
	}
	pause := "0"
	if s.PauseRequested {
		pause = "1"
	}
	return []any{
		"taskId", s.ID, "planId", s.PlanID, "tenantId", s.TenantID, "status", string(s.Status),
		"pauseRequested", pause, "attempt", s.Attempt, "stage", s.CurrentStage,
		"createdAt", encTime(s.CreatedAt), "startedAt", encTime(s.StartedAt), "finishedAt", encTime(s.FinishedAt),
		"updatedAt", encTime(s.UpdatedAt), "heartbeatAt", encTime(s.HeartbeatAt),
		"lastError", lastError, "ledger", ledgerJSON, "params", params,
	}, nil
}

// failureJSON is a task's last error as stored.
type failureJSON struct {
	Stage   string      `json:"stage,omitempty"`
	Attempt int         `json:"attempt,omitempty"`
	Class   stage.Class `json:"class"`
	Message string      `json:"message"`
	Code    int         `json:"code,omitempty"`
}

// decodeTask rebuilds a task from its hash; stages come from its plan.
func decodeTask(h map[string]string, stages []stage.Spec) (*task.Task, error) {
	s := task.State{
		ID: h["taskId"], PlanID: h["planId"], TenantID: h["tenantId"], Stages: stages,
		Status: task.Status(h["status"]), PauseRequested: h["pauseRequested"] == "1",
	}
	var err error
	ints := map[string]*int{"attempt": &s.Attempt, "stage": &s.CurrentStage}
	for name, dst := range ints {
		if *dst, err = strconv.Atoi(h[name]); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if s.Fence, err = strconv.ParseUint(h["fence"], 10, 64); err != nil {
		return nil, fmt.Errorf("fence: %w", err)
	}
	if err := decTimes(h, map[string]*time.Time{
		"createdAt": &s.CreatedAt, "startedAt": &s.StartedAt, "finishedAt": &s.FinishedAt,
		"updatedAt": &s.UpdatedAt, "heartbeatAt": &s.HeartbeatAt,
	}); err != nil {
		return nil, err
	}
	if p := h["params"]; p != "" && p != "null" {
		if err := json.Unmarshal([]byte(p), &s.Params); err != nil {
			return nil, fmt.Errorf("params: %w", err)
		}
	}
	if e := h["lastError"]; e != "" {
		var f failureJSON
		if err := json.Unmarshal([]byte(e), &f); err != nil {
			return nil, fmt.Errorf("lastError: %w", err)
		}
		lf := task.Failure(f)
		s.LastError = &lf
	}
	var ledger []attemptJSON
	if err := json.Unmarshal([]byte(h["ledger"]), &ledger); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	for _, a := range ledger {
		s.Ledger = append(s.Ledger, task.Attempt{
			StageIndex: a.StageIndex, Stage: a.Stage, Run: a.Run, Attempt: a.Attempt,
			StartedAt: time.UnixMicro(a.StartedAt).UTC(), EndedAt: time.UnixMicro(a.EndedAt).UTC(),
			Outcome: task.Outcome(a.Outcome), Class: stage.Class(a.Class), Error: a.Error, Code: a.Code,
			Backoff: time.Duration(a.BackoffMs) * time.Millisecond,
		})
	}
	return task.Load(s)
}
