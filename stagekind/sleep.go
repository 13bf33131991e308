package stagekind

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

// KindSleep is the kind name of Sleep.
const KindSleep = "sleep"

// MaxSleep is the longest duration a sleep stage accepts.
const MaxSleep = 24 * time.Hour

// Sleep is the sleep kind (bake time). Its one param, duration, is a Go duration string such as
// "30s", greater than zero and at most MaxSleep. Its output is {"slept":"<duration>"}.
type Sleep struct{}

var _ stage.ParamValidator = Sleep{}

// Run waits for the duration. When ctx is done first it returns ctx.Err() at once, which
// stage.AsError classifies as timeout or cancelled.
func (Sleep) Run(ctx context.Context, req stage.Request) (json.RawMessage, error) {
	d, err := sleepDuration(req.Params)
	if err != nil {
		return nil, invalidParams(err)
	}
	if !sleepCtx(ctx, d) {
		return nil, ctx.Err()
	}
	return json.Marshal(struct {
		Slept string `json:"slept"`
	}{d.String()})
}

// ValidateParams checks that duration is present, a string, a valid Go duration, greater than
// zero and at most MaxSleep.
func (Sleep) ValidateParams(params map[string]any) error {
	_, err := sleepDuration(params)
	return err
}

func sleepDuration(params map[string]any) (time.Duration, error) {
	if err := checkKnownParams(params, "duration"); err != nil {
		return 0, err
	}
	raw, ok := params["duration"]
	if !ok {
		return 0, paramError("duration", "is required")
	}
	s, ok := raw.(string)
	if !ok {
		return 0, paramError("duration", fmt.Sprintf(`must be a duration string such as "30s", not %T`, raw))
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, paramError("duration", fmt.Sprintf(`%q is not a duration such as "30s"`, s))
	}
	if d <= 0 || d > MaxSleep {
		return 0, paramError("duration", fmt.Sprintf("must be greater than 0 and at most %s, got %s", MaxSleep, d))
	}
	return d, nil
}
