package redisrepo

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

// rolloutJSON is a plan's rings as the plan hash's "waves" field holds them ("" without).
type rolloutJSON struct {
	Waves         []waveJSON `json:"waves"`
	Order         string     `json:"order"`
	Seed          uint64     `json:"seed,omitempty"`
	FailureBudget string     `json:"failureBudget,omitempty"`
	Bounds        []int      `json:"bounds"`
}

type waveJSON struct {
	Name           string          `json:"name"`
	Size           string          `json:"size"` // a share, or "rest"
	MaxConcurrency int             `json:"maxConcurrency,omitempty"`
	Bake           string          `json:"bake,omitempty"`
	Then           string          `json:"then"`
	FailureBudget  string          `json:"failureBudget,omitempty"`
	Health         json.RawMessage `json:"health,omitempty"`   // one spec, as the "spec" field's
	Analysis       json.RawMessage `json:"analysis,omitempty"` // specs, as the "spec" field's
}

// encRollout encodes r ("" without waves).
func encRollout(r plan.Rollout) (string, error) {
	if !r.Enabled() {
		return "", nil
	}
	out := rolloutJSON{Order: string(r.Order), Seed: r.Seed, FailureBudget: encShare(r.FailureBudget), Bounds: r.Bounds}
	for _, w := range r.Waves {
		wj := waveJSON{Name: w.Name, Size: w.Size.String(), MaxConcurrency: w.MaxConcurrency, Then: string(w.Then),
			FailureBudget: encShare(w.FailureBudget)}
		if w.Rest {
			wj.Size = "rest"
		}
		if w.Bake > 0 {
			wj.Bake = w.Bake.String()
		}
		if w.Health != nil {
			b, err := encSpecs([]stage.Spec{*w.Health})
			if err != nil {
				return "", err
			}
			wj.Health = b
		}
		if len(w.Analysis) > 0 {
			b, err := encSpecs(w.Analysis)
			if err != nil {
				return "", err
			}
			wj.Analysis = b
		}
		out.Waves = append(out.Waves, wj)
	}
	b, err := json.Marshal(out)
	return string(b), err
}

// decRollout decodes what encRollout wrote.
func decRollout(v string) (plan.Rollout, error) {
	if v == "" {
		return plan.Rollout{}, nil
	}
	var in rolloutJSON
	if err := json.Unmarshal([]byte(v), &in); err != nil {
		return plan.Rollout{}, err
	}
	r := plan.Rollout{Order: plan.Order(in.Order), Seed: in.Seed, Bounds: in.Bounds}
	var err error
	if r.FailureBudget, err = decShare(in.FailureBudget); err != nil {
		return plan.Rollout{}, err
	}
	for i, wj := range in.Waves {
		w := plan.Wave{Name: wj.Name, MaxConcurrency: wj.MaxConcurrency, Then: plan.Then(wj.Then), Rest: wj.Size == "rest"}
		if !w.Rest {
			if w.Size, err = plan.ParseShare(wj.Size); err != nil {
				return plan.Rollout{}, fmt.Errorf("waves[%d].size: %w", i, err)
			}
		}
		if wj.Bake != "" {
			if w.Bake, err = time.ParseDuration(wj.Bake); err != nil {
				return plan.Rollout{}, fmt.Errorf("waves[%d].bake: %w", i, err)
			}
		}
		if w.FailureBudget, err = decShare(wj.FailureBudget); err != nil {
			return plan.Rollout{}, fmt.Errorf("waves[%d].failureBudget: %w", i, err)
		}
		if len(wj.Health) > 0 {
			specs, err := decSpecs(wj.Health)
			if err != nil || len(specs) != 1 {
				return plan.Rollout{}, fmt.Errorf("waves[%d].health: %v", i, err)
			}
			w.Health = &specs[0]
		}
		if len(wj.Analysis) > 0 {
			if w.Analysis, err = decSpecs(wj.Analysis); err != nil {
				return plan.Rollout{}, fmt.Errorf("waves[%d].analysis: %v", i, err)
			}
		}
		r.Waves = append(r.Waves, w)
	}
	return r, nil
}

func encShare(s *plan.Share) string {
	if s == nil {
		return ""
	}
	return s.String()
}

func decShare(v string) (*plan.Share, error) {
	if v == "" {
		return nil, nil
	}
	s, err := plan.ParseShare(v)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// ringJSON is where a rolling plan stands, as the plan hash's "ring" status field holds it
// ("" without waves, and in canary plans stored before rings: read from "phase").
type ringJSON struct {
	Index    int    `json:"index"`
	Phase    string `json:"phase"`
	Since    string `json:"since,omitempty"`
	HaltedIn string `json:"haltedIn,omitempty"`
	Halt     string `json:"halt,omitempty"`
	Waived   bool   `json:"waived,omitempty"`
	Analysis bool   `json:"analysis,omitempty"`
}

func encRing(r plan.Ring) string {
	if r == (plan.Ring{}) {
		return ""
	}
	b, _ := json.Marshal(ringJSON{Index: r.Index, Phase: string(r.Phase), Since: encTime(r.Since),
		HaltedIn: string(r.HaltedIn), Halt: r.Halt, Waived: r.Waived, Analysis: r.Analysis}) // strings and numbers: never fails
	return string(b)
}

func decRing(v string) (plan.Ring, error) {
	if v == "" {
		return plan.Ring{}, nil
	}
	var in ringJSON
	if err := json.Unmarshal([]byte(v), &in); err != nil {
		return plan.Ring{}, err
	}
	since, err := decTime(in.Since)
	if err != nil {
		return plan.Ring{}, err
	}
	return plan.Ring{Index: in.Index, Phase: plan.RingPhase(in.Phase), Since: since,
		HaltedIn: plan.RingPhase(in.HaltedIn), Halt: in.Halt, Waived: in.Waived, Analysis: in.Analysis}, nil
}
