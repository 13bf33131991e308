package app

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

// canonicalRequest is a submission's content as requestHash encodes it: every field that makes
// the plan, defaults filled in, without the Idempotency-Key and the dry-run flag.
type canonicalRequest struct {
	Name           string             `json:"name"`
	Labels         map[string]string  `json:"labels"`
	MaxConcurrency int                `json:"maxConcurrency"`
	FailureBudget  int                `json:"failureBudget"`
	StartAt        string             `json:"startAt"`
	StartRate      int                `json:"startRate"`
	Canary         plan.Canary        `json:"canary"`
	Rollout        *plan.Rollout      `json:"rollout,omitempty"` // with its defaults; absent without waves (hashes made before waves hold)
	Stages         []canonicalStage   `json:"stages"`
	Tenants        []canonicalTenant  `json:"tenants"`
	OnFailure      plan.OnFailure     `json:"onFailure,omitempty"` // absent for none (hashes made before it hold)
	Approvers      *stage.Approvers   `json:"approvers,omitempty"` // absent without (hashes made before it hold)
	Notify         []plan.Destination `json:"notify,omitempty"`    // absent without
}

type canonicalStage struct {
	Name    string          `json:"name"`
	Kind    string          `json:"kind"`
	Params  map[string]any  `json:"params"`
	Timeout time.Duration   `json:"timeout"`
	Retry   stage.Policy    `json:"retry"`
	Undo    *canonicalStage `json:"undo,omitempty"`
	// Approvers: absent without (hashes made before it hold)
	Approvers *stage.Approvers `json:"approvers,omitempty"`
}

type canonicalTenant struct {
	ID     string         `json:"id"`
	Params map[string]any `json:"params"`
	Wave   string         `json:"wave,omitempty"`
}

// requestHash identifies a submission's content: the SHA-256 (hex) of the decoded request
// re-encoded canonically (object keys sorted, durations in nanoseconds, times in UTC, defaults
// filled in, an empty object the same as none), so that YAML or JSON, key order, whitespace
// and spelling a default out do not change it. Two submissions with the same Idempotency-Key
// and the same hash are one submission (the second replays the first); with another hash,
// the second is refused (IdempotencyMismatchError).
func requestHash(req SubmitRequest) string {
	c := canonicalRequest{
		Name: req.Name, Labels: req.Labels, MaxConcurrency: req.MaxConcurrency, FailureBudget: req.FailureBudget,
		StartRate: req.StartRate, Canary: req.Canary,
		Stages:  make([]canonicalStage, len(req.Stages)),
		Tenants: make([]canonicalTenant, len(req.Tenants)),
	}
	if len(c.Labels) == 0 {
		c.Labels = nil
	}
	if r := withRolloutDefaults(req); r.Enabled() {
		c.Rollout = &r
	}
	if c.MaxConcurrency == 0 {
		c.MaxConcurrency = plan.DefaultMaxConcurrency
	}
	if !req.StartAt.IsZero() {
		c.StartAt = req.StartAt.UTC().Format(time.RFC3339Nano)
	}
	if req.OnFailure != plan.OnFailureNone {
		c.OnFailure = req.OnFailure
	}
	c.Approvers, c.Notify = req.Approvers, req.Notify
	for i, sp := range req.Stages {
		c.Stages[i] = canonicalOf(sp)
	}
	for i, tn := range req.Tenants {
		c.Tenants[i] = canonicalTenant{ID: tn.ID, Params: emptyNil(tn.Params), Wave: tn.Wave}
	}
	b, err := json.Marshal(c)
	if err != nil { // params that JSON cannot encode: the submission is refused anyway (checkLimits)
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func emptyNil(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	return m
}

// canonicalOf is sp as requestHash encodes it, with the retry policy's defaults (an invalid
// spec is kept as it is) and its undo.
func canonicalOf(sp stage.Spec) canonicalStage {
	checked, _ := sp.Validate("")
	c := canonicalStage{Name: sp.Name, Kind: sp.Kind, Params: emptyNil(sp.Params), Timeout: sp.Timeout, Retry: checked.Retry,
		Approvers: sp.Approvers}
	if sp.Undo != nil {
		u := canonicalOf(*sp.Undo)
		c.Undo = &u
	}
	return c
}
