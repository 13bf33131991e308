package redisrepo

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
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
	waves, err := encRollout(s.Rollout)
	if err != nil {
		return nil, err
	}
	approvers, err := encApproversField(s.Approvers)
	if err != nil {
		return nil, err
	}
	canary := ""
	if s.Canary.Tenants > 0 {
		canary = strconv.Itoa(s.Canary.Tenants) + ":" + string(s.Canary.Then)
	}
	return append(planStatusFields(p, updated), []any{
		"version", s.Version, // counted with the status fields: a write-back writes it with them
		"planId", s.ID, "name", s.Name, "labels", labels, "spec", spec, "taskIds", taskIDs,
		"maxConcurrency", s.MaxConcurrency, "failureBudget", s.FailureBudget,
		"startAt", encTime(s.StartAt), "createdAt", encTime(s.CreatedAt),
		"idempotencyKey", s.IdempotencyKey, "canary", canary, "startRate", s.StartRate,
		"requestHash", s.RequestHash, "waves", waves, "onFailure", string(s.OnFailure),
		"approvers", approvers, "submittedBy", s.SubmittedBy, "notify", encNotify(s.Notify),
	}...), nil
}

// planStatusPairs is how many field, value pairs of planFields are status fields (they come
// first): planStatusFields' and the version.
const planStatusPairs = 11

// planStatusFields are the fields a plan's transitions change, with when this change was made
// (updatedAt: a change that reaches Redis late never overwrites a later one).
func planStatusFields(p *plan.Plan, updated time.Time) []any {
	return []any{
		"status", string(p.Status()), "startedAt", encTime(p.StartedAt()), "finishedAt", encTime(p.FinishedAt()),
		"updatedAt", encTime(updated), "phase", string(p.Phase()), "reason", p.Reason(), "ring", encRing(p.Ring()),
		"analysis", encAnalysis(p.Analysis()), "decisions", encRingDecisions(p.Decisions()),
		"notices", encNotices(p.Notices()),
	}
}

func decodePlan(h map[string]string) (*plan.Plan, error) {
	s := plan.State{
		ID: h["planId"], Name: h["name"], Status: plan.Status(h["status"]), IdempotencyKey: h["idempotencyKey"],
		RequestHash: h["requestHash"], // absent in plans written before it existed: replayed whatever the body
		Phase:       plan.Phase(h["phase"]), Reason: h["reason"],
		OnFailure:   plan.OnFailure(h["onFailure"]), // absent in plans written before it existed: none
		SubmittedBy: h["submittedBy"],               // absent in plans written before actors: ""
	}
	var err error
	if s.Approvers, err = decApproversField(h["approvers"]); err != nil {
		return nil, fmt.Errorf("approvers: %w", err)
	}
	if s.Decisions, err = decRingDecisions(h["decisions"]); err != nil {
		return nil, fmt.Errorf("decisions: %w", err)
	}
	if s.Notify, err = decNotify(h["notify"]); err != nil {
		return nil, fmt.Errorf("notify: %w", err)
	}
	if s.Notices, err = decNotices(h["notices"]); err != nil {
		return nil, fmt.Errorf("notices: %w", err)
	}
	if v := h["version"]; v != "" { // absent in plans written before versions existed: 0
		if s.Version, err = strconv.ParseUint(v, 10, 64); err != nil {
			return nil, fmt.Errorf("version: %w", err)
		}
	}
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
	if r := h["startRate"]; r != "" { // absent in plans written before pacing existed
		if s.StartRate, err = strconv.Atoi(r); err != nil {
			return nil, fmt.Errorf("startRate: %w", err)
		}
	}
	if s.Canary, err = decCanary(h["canary"]); err != nil {
		return nil, fmt.Errorf("canary: %w", err)
	}
	if s.Rollout, err = decRollout(h["waves"]); err != nil {
		return nil, fmt.Errorf("waves: %w", err)
	}
	if s.Ring, err = decRing(h["ring"]); err != nil {
		return nil, fmt.Errorf("ring: %w", err)
	}
	if s.Analysis, err = decAnalysis(h["analysis"]); err != nil {
		return nil, fmt.Errorf("analysis: %w", err)
	}
	if err := decTimes(h, map[string]*time.Time{
		"startAt": &s.StartAt, "createdAt": &s.CreatedAt, "startedAt": &s.StartedAt, "finishedAt": &s.FinishedAt,
	}); err != nil {
		return nil, err
	}
	return plan.Load(s)
}

// decCanary decodes a canary wave stored as "<tenants>:<then>" ("": none).
func decCanary(v string) (plan.Canary, error) {
	if v == "" {
		return plan.Canary{}, nil
	}
	n, then, ok := strings.Cut(v, ":")
	if !ok {
		return plan.Canary{}, fmt.Errorf("%q is not <tenants>:<then>", v)
	}
	tenants, err := strconv.Atoi(n)
	if err != nil {
		return plan.Canary{}, err
	}
	return plan.Canary{Tenants: tenants, Then: plan.Then(then)}, nil
}
