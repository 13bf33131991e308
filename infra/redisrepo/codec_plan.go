package redisrepo

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/executor-dev/executor/domain/plan"
)

// planFields is the whole plan hash, status fields first, stamped as changed at updated (its
// creation, or a write-back's own time).
func planFields(p *plan.Plan, updated time.Time) ([]any, error) {
	s := p.State()
	spec, err := encSpecs(s.Stages)
	if err != nil {
		return nil, err
	}
	taskIDs, err := json.Marshal(s.TaskIDs)
	if err != nil {
		return nil, err
	}
	labels, err := json.Marshal(s.Labels)
	if err != nil {
		return nil, err
	}
	return append(planStatusFields(p, updated), []any{
		"planId", s.ID, "name", s.Name, "labels", labels, "spec", spec, "taskIds", taskIDs,
		"maxConcurrency", s.MaxConcurrency, "failureBudget", s.FailureBudget,
		"startAt", encTime(s.StartAt), "createdAt", encTime(s.CreatedAt),
		"idempotencyKey", s.IdempotencyKey,
	}...), nil
}

// planStatusPairs is how many field, value pairs planStatusFields returns.
const planStatusPairs = 4

// planStatusFields are the fields a plan's transitions change, with when this change was made
// (updatedAt: a change that reaches Redis late never overwrites a later one).
func planStatusFields(p *plan.Plan, updated time.Time) []any {
	return []any{
		"status", string(p.Status()), "startedAt", encTime(p.StartedAt()), "finishedAt", encTime(p.FinishedAt()),
		"updatedAt", encTime(updated),
	}
}

func decodePlan(h map[string]string) (*plan.Plan, error) {
	s := plan.State{
		ID: h["planId"], Name: h["name"], Status: plan.Status(h["status"]), IdempotencyKey: h["idempotencyKey"],
	}
	var err error
	if s.Stages, err = decSpecs([]byte(h["spec"])); err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	if err = json.Unmarshal([]byte(h["taskIds"]), &s.TaskIDs); err != nil {
		return nil, fmt.Errorf("taskIds: %w", err)
	}
	if err = json.Unmarshal([]byte(h["labels"]), &s.Labels); err != nil {
		return nil, fmt.Errorf("labels: %w", err)
	}
	if s.MaxConcurrency, err = strconv.Atoi(h["maxConcurrency"]); err != nil {
		return nil, fmt.Errorf("maxConcurrency: %w", err)
	}
	if s.FailureBudget, err = strconv.Atoi(h["failureBudget"]); err != nil {
		return nil, fmt.Errorf("failureBudget: %w", err)
	}
	if err := decTimes(h, map[string]*time.Time{
		"startAt": &s.StartAt, "createdAt": &s.CreatedAt, "startedAt": &s.StartedAt, "finishedAt": &s.FinishedAt,
	}); err != nil {
		return nil, err
	}
	return plan.Load(s)
}
