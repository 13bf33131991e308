package stage

import (
	"fmt"
	"math"
	"time"
)

// Jitter is how a backoff is randomised.
type Jitter string

// Jitter modes. Full jitter (the default) draws uniformly from [0, backoff].
const (
	JitterFull  Jitter = "full"
	JitterEqual Jitter = "equal"
	JitterNone  Jitter = "none"
)

// Policy defaults, applied to zero fields.
const (
	DefaultMaxAttempts    = 3
	DefaultInitialBackoff = time.Second
	DefaultMaxBackoff     = 30 * time.Second
	DefaultMultiplier     = 2.0

	// MaxRetryAfter caps a Retry-After hint, so a remote side cannot park a tenant (and its
	// lease) for hours.
	MaxRetryAfter = 10 * time.Minute
)

// Policy is a stage's retry policy. The zero value means "defaults".
type Policy struct {
	MaxAttempts    int
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	Multiplier     float64
	Jitter         Jitter
}

func (p Policy) withDefaults(field string) (Policy, error) {
	bad := func(f, reason string) (Policy, error) {
		return p, &FieldError{Field: field + "." + f, Reason: reason, Err: ErrInvalidSpec}
	}
	switch {
	case p.MaxAttempts < 0 || p.MaxAttempts > 100:
		return bad("maxAttempts", "must be between 1 and 100")
	case p.InitialBackoff < 0:
		return bad("initialBackoff", "must not be negative")
	case p.MaxBackoff < 0:
		return bad("maxBackoff", "must not be negative")
	case p.Multiplier != 0 && !(p.Multiplier >= 1 && p.Multiplier <= 100):
		return bad("multiplier", "must be between 1 and 100")
	}
	switch p.Jitter {
	case "", JitterFull, JitterEqual, JitterNone:
	default:
		return bad("jitter", `must be "full", "equal" or "none"`)
	}
	if p.MaxAttempts == 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.InitialBackoff == 0 {
		p.InitialBackoff = DefaultInitialBackoff
	}
	if p.MaxBackoff == 0 {
		p.MaxBackoff = max(DefaultMaxBackoff, p.InitialBackoff)
	}
	if p.Multiplier == 0 {
		p.Multiplier = DefaultMultiplier
	}
	if p.Jitter == "" {
		p.Jitter = JitterFull
	}
	if p.MaxBackoff < p.InitialBackoff {
		return bad("maxBackoff", fmt.Sprintf("must be at least initialBackoff (%s)", p.InitialBackoff))
	}
	return p, nil
}

// Backoff is the wait before attempt+1 after attempt (1-based) failed. A positive hint (a
// Retry-After from the failure) wins, up to MaxRetryAfter. rnd returns a uniform value in [0,1).
func (p Policy) Backoff(attempt int, hint time.Duration, rnd func() float64) time.Duration {
	if hint > 0 {
		return min(hint, MaxRetryAfter)
	}
	ceiling := float64(p.InitialBackoff) * math.Pow(p.Multiplier, float64(attempt-1))
	if ceiling > float64(p.MaxBackoff) || math.IsInf(ceiling, 0) {
		ceiling = float64(p.MaxBackoff)
	}
	switch p.Jitter {
	case JitterNone:
		return time.Duration(ceiling)
	case JitterEqual:
		return time.Duration(ceiling/2 + rnd()*ceiling/2)
	default:
		return time.Duration(rnd() * ceiling)
	}
}
