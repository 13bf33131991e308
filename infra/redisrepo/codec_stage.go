package redisrepo

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

// specJSON is a stage spec as stored in the plan hash's "spec" field.
type specJSON struct {
	Name    string         `json:"name"`
	Kind    string         `json:"kind"`
	Params  map[string]any `json:"params,omitempty"`
	Timeout string         `json:"timeout,omitempty"`
	Retry   retryJSON      `json:"retry"`
	Undo    *specJSON      `json:"undo,omitempty"`
	// Approvers is a gate's rule (absent: none).
	Approvers *approversJSON `json:"approvers,omitempty"`
}

// approversJSON is an approvers rule as stored in a gate's spec and in the plan hash.
type approversJSON struct {
	Roles        []string `json:"roles,omitempty"`
	Names        []string `json:"names,omitempty"`
	Count        int      `json:"count,omitempty"`
	NotSubmitter bool     `json:"notSubmitter,omitempty"`
	Submitter    string   `json:"submitter,omitempty"`
}

func encApprovers(a *stage.Approvers) *approversJSON {
	if a == nil {
		return nil
	}
	j := approversJSON(*a)
	return &j
}

func decApprovers(j *approversJSON) *stage.Approvers {
	if j == nil {
		return nil
	}
	a := stage.Approvers(*j)
	return &a
}

type retryJSON struct {
	MaxAttempts    int     `json:"maxAttempts"`
	InitialBackoff string  `json:"initialBackoff"`
	MaxBackoff     string  `json:"maxBackoff"`
	Multiplier     float64 `json:"multiplier"`
	Jitter         string  `json:"jitter"`
}

func encSpecs(specs []stage.Spec) ([]byte, error) {
	out := make([]specJSON, len(specs))
	for i, s := range specs {
		out[i] = encSpec(s)
	}
	return json.Marshal(out)
}

func encSpec(s stage.Spec) specJSON {
	out := specJSON{
		Name: s.Name, Kind: s.Kind, Params: s.Params,
		Retry: retryJSON{
			MaxAttempts: s.Retry.MaxAttempts, InitialBackoff: s.Retry.InitialBackoff.String(),
			MaxBackoff: s.Retry.MaxBackoff.String(), Multiplier: s.Retry.Multiplier, Jitter: string(s.Retry.Jitter),
		},
	}
	if s.Timeout > 0 {
		out.Timeout = s.Timeout.String()
	}
	if s.Undo != nil {
		u := encSpec(*s.Undo)
		out.Undo = &u
	}
	out.Approvers = encApprovers(s.Approvers)
	return out
}

func decSpecs(b []byte) ([]stage.Spec, error) {
	var in []specJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, err
	}
	out := make([]stage.Spec, len(in))
	for i, s := range in {
		spec, err := decSpec(s)
		if err != nil {
			return nil, err
		}
		out[i] = spec
	}
	return out, nil
}

func decSpec(s specJSON) (stage.Spec, error) {
	spec := stage.Spec{Name: s.Name, Kind: s.Kind, Params: s.Params, Approvers: decApprovers(s.Approvers), Retry: stage.Policy{
		MaxAttempts: s.Retry.MaxAttempts, Multiplier: s.Retry.Multiplier, Jitter: stage.Jitter(s.Retry.Jitter),
	}}
	var err error
	if spec.Timeout, err = parseDuration(s.Timeout); err != nil {
		return spec, err
	}
	if spec.Retry.InitialBackoff, err = parseDuration(s.Retry.InitialBackoff); err != nil {
		return spec, err
	}
	if spec.Retry.MaxBackoff, err = parseDuration(s.Retry.MaxBackoff); err != nil {
		return spec, err
	}
	if s.Undo != nil {
		u, err := decSpec(*s.Undo)
		if err != nil {
			return spec, fmt.Errorf("undo: %w", err)
		}
		spec.Undo = &u
	}
	return spec, nil
}

func parseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	return time.ParseDuration(s)
}
