package stage_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
)

func TestSpecValidate(t *testing.T) {
	t.Parallel()
	valid := stage.Spec{Name: "deploy", Kind: "http"}
	tests := []struct {
		name      string
		mutate    func(s *stage.Spec)
		wantField string // empty: valid
	}{
		{"minimal", func(*stage.Spec) {}, ""},
		{"name with dots, dashes, underscores", func(s *stage.Spec) { s.Name = "pre.deploy-1_a" }, ""},
		{"64-character name", func(s *stage.Spec) { s.Name = "a" + strings.Repeat("b", 63) }, ""},
		{"65-character name", func(s *stage.Spec) { s.Name = "a" + strings.Repeat("b", 64) }, "stages[0].name"},
		{"empty name", func(s *stage.Spec) { s.Name = "" }, "stages[0].name"},
		{"name starts with a dash", func(s *stage.Spec) { s.Name = "-x" }, "stages[0].name"},
		{"name with a space", func(s *stage.Spec) { s.Name = "de ploy" }, "stages[0].name"},
		{"name with a brace", func(s *stage.Spec) { s.Name = "x{y}" }, "stages[0].name"},
		{"name with a slash", func(s *stage.Spec) { s.Name = "a/b" }, "stages[0].name"},
		{"no kind", func(s *stage.Spec) { s.Kind = "" }, "stages[0].kind"},
		{"negative timeout", func(s *stage.Spec) { s.Timeout = -time.Second }, "stages[0].timeout"},
		{"zero timeout", func(s *stage.Spec) { s.Timeout = 0 }, ""},
		{"negative max attempts", func(s *stage.Spec) { s.Retry.MaxAttempts = -1 }, "stages[0].retry.maxAttempts"},
		{"101 max attempts", func(s *stage.Spec) { s.Retry.MaxAttempts = 101 }, "stages[0].retry.maxAttempts"},
		{"100 max attempts", func(s *stage.Spec) { s.Retry.MaxAttempts = 100 }, ""},
		{"negative initial backoff", func(s *stage.Spec) { s.Retry.InitialBackoff = -1 }, "stages[0].retry.initialBackoff"},
		{"negative max backoff", func(s *stage.Spec) { s.Retry.MaxBackoff = -1 }, "stages[0].retry.maxBackoff"},
		{"max backoff below initial", func(s *stage.Spec) {
			s.Retry.InitialBackoff = 10 * time.Second
			s.Retry.MaxBackoff = 5 * time.Second
		}, "stages[0].retry.maxBackoff"},
		{"multiplier below 1", func(s *stage.Spec) { s.Retry.Multiplier = 0.5 }, "stages[0].retry.multiplier"},
		{"negative multiplier", func(s *stage.Spec) { s.Retry.Multiplier = -2 }, "stages[0].retry.multiplier"},
		{"multiplier 1", func(s *stage.Spec) { s.Retry.Multiplier = 1 }, ""},
		{"unknown jitter", func(s *stage.Spec) { s.Retry.Jitter = "some" }, "stages[0].retry.jitter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := valid
			tt.mutate(&s)
			got, err := s.Validate("stages[0]")
			if tt.wantField == "" {
				require.NoError(t, err)
				assert.GreaterOrEqual(t, got.Retry.MaxAttempts, 1)
				return
			}
			require.ErrorIs(t, err, stage.ErrInvalidSpec)
			var fe *stage.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.wantField, fe.Field)
			assert.NotEmpty(t, fe.Reason)
		})
	}
}

func TestSpecValidateAppliesRetryDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   stage.Policy
		want stage.Policy
	}{
		{"zero policy", stage.Policy{}, stage.Policy{
			MaxAttempts: stage.DefaultMaxAttempts, InitialBackoff: stage.DefaultInitialBackoff,
			MaxBackoff: stage.DefaultMaxBackoff, Multiplier: stage.DefaultMultiplier, Jitter: stage.JitterFull,
		}},
		{"defaults are 3, 1s, 30s, 2, full", stage.Policy{}, stage.Policy{
			MaxAttempts: 3, InitialBackoff: time.Second, MaxBackoff: 30 * time.Second, Multiplier: 2, Jitter: "full",
		}},
		{"set fields are kept", stage.Policy{
			MaxAttempts: 7, InitialBackoff: 2 * time.Second, MaxBackoff: time.Minute, Multiplier: 3, Jitter: stage.JitterEqual,
		}, stage.Policy{
			MaxAttempts: 7, InitialBackoff: 2 * time.Second, MaxBackoff: time.Minute, Multiplier: 3, Jitter: stage.JitterEqual,
		}},
		{"partial", stage.Policy{MaxAttempts: 1, Jitter: stage.JitterNone}, stage.Policy{
			MaxAttempts: 1, InitialBackoff: time.Second, MaxBackoff: 30 * time.Second, Multiplier: 2, Jitter: stage.JitterNone,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := stage.Spec{Name: "a", Kind: "sleep", Timeout: time.Second, Retry: tt.in}
			got, err := s.Validate("stages[3]")
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.Retry)
			assert.Equal(t, s.Name, got.Name)
			assert.Equal(t, s.Timeout, got.Timeout)
			assert.Equal(t, tt.in, s.Retry, "Validate does not modify its receiver")
		})
	}
}

func TestFieldErrorField(t *testing.T) {
	t.Parallel()
	_, err := stage.Spec{Name: "a", Kind: "k", Retry: stage.Policy{MaxAttempts: 500}}.Validate("stages[2]")
	var fe *stage.FieldError
	require.True(t, errors.As(fmt.Errorf("wrapped: %w", err), &fe))
	assert.Equal(t, "stages[2].retry.maxAttempts", fe.Field)
	assert.ErrorIs(t, fe, stage.ErrInvalidSpec)
}

func defaults(t *testing.T, p stage.Policy) stage.Policy {
	t.Helper()
	s, err := stage.Spec{Name: "a", Kind: "k", Retry: p}.Validate("s")
	require.NoError(t, err)
	return s.Retry
}

func constant(v float64) func() float64 { return func() float64 { return v } }

func TestBackoffNoJitter(t *testing.T) {
	t.Parallel()
	p := defaults(t, stage.Policy{InitialBackoff: time.Second, MaxBackoff: 10 * time.Second, Multiplier: 2, Jitter: stage.JitterNone})
	tests := []struct {
		attempt int
		want    time.Duration
	}{
		{1, time.Second},
		{2, 2 * time.Second},
		{3, 4 * time.Second},
		{4, 8 * time.Second},
		{5, 10 * time.Second}, // 16s capped
		{6, 10 * time.Second},
		{100, 10 * time.Second},
		{100000, 10 * time.Second}, // the power overflows to +Inf
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("attempt %d", tt.attempt), func(t *testing.T) {
			t.Parallel()
			rnd := func() float64 { t.Error("no jitter must not draw"); return 0 }
			assert.Equal(t, tt.want, p.Backoff(tt.attempt, 0, rnd))
		})
	}

	t.Run("multiplier 1.5", func(t *testing.T) {
		t.Parallel()
		p := defaults(t, stage.Policy{InitialBackoff: 100 * time.Millisecond, Multiplier: 1.5, Jitter: stage.JitterNone})
		assert.Equal(t, 225*time.Millisecond, p.Backoff(3, 0, nil))
	})
}

func TestBackoffJitter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		jitter  stage.Jitter
		attempt int
		rnd     float64
		ceiling time.Duration
	}{
		{"full rnd 0", stage.JitterFull, 3, 0, 4 * time.Second},
		{"full rnd 0.999", stage.JitterFull, 3, 0.999, 4 * time.Second},
		{"full capped rnd 0.999", stage.JitterFull, 20, 0.999, 10 * time.Second},
		{"default is full", "", 2, 0.5, 2 * time.Second},
		{"equal rnd 0", stage.JitterEqual, 3, 0, 4 * time.Second},
		{"equal rnd 0.999", stage.JitterEqual, 3, 0.999, 4 * time.Second},
		{"equal capped rnd 0", stage.JitterEqual, 20, 0, 10 * time.Second},
		{"equal capped rnd 0.999", stage.JitterEqual, 20, 0.999, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := defaults(t, stage.Policy{InitialBackoff: time.Second, MaxBackoff: 10 * time.Second, Jitter: tt.jitter})
			got := p.Backoff(tt.attempt, 0, constant(tt.rnd))
			lo := time.Duration(0)
			if p.Jitter == stage.JitterEqual {
				lo = tt.ceiling / 2
			}
			assert.GreaterOrEqual(t, got, lo)
			assert.LessOrEqual(t, got, tt.ceiling)
			if tt.rnd == 0 {
				assert.Equal(t, lo, got, "rnd 0 gives the lower bound")
			}
		})
	}
}

func TestBackoffRetryAfterHint(t *testing.T) {
	t.Parallel()
	p := defaults(t, stage.Policy{InitialBackoff: time.Second, MaxBackoff: 10 * time.Second, Jitter: stage.JitterNone})
	tests := []struct {
		name string
		hint time.Duration
		want time.Duration
	}{
		{"hint wins over the policy", 3 * time.Second, 3 * time.Second},
		{"hint wins over MaxBackoff", 2 * time.Minute, 2 * time.Minute},
		{"hint capped at MaxRetryAfter", 3 * time.Hour, stage.MaxRetryAfter},
		{"hint equal to MaxRetryAfter", stage.MaxRetryAfter, stage.MaxRetryAfter},
		{"zero hint ignored", 0, time.Second},
		{"negative hint ignored", -time.Minute, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, p.Backoff(1, tt.hint, constant(0.5)))
		})
	}
	assert.Equal(t, 10*time.Minute, stage.MaxRetryAfter)
}

func TestAsError(t *testing.T) {
	t.Parallel()
	typed := &stage.Error{Class: stage.ClassPermanent, Message: "bad request", Code: 400}
	tests := []struct {
		name      string
		err       error
		wantClass stage.Class
		same      *stage.Error // when set, AsError must return exactly this *Error
	}{
		{"typed keeps its class", typed, stage.ClassPermanent, typed},
		{"wrapped typed found via errors.As", fmt.Errorf("call: %w", typed), stage.ClassPermanent, typed},
		{"lease lost kept", &stage.Error{Class: stage.ClassLeaseLost, Message: "x"}, stage.ClassLeaseLost, nil},
		{"deadline is a timeout", context.DeadlineExceeded, stage.ClassTimeout, nil},
		{"wrapped deadline is a timeout", fmt.Errorf("get: %w", context.DeadlineExceeded), stage.ClassTimeout, nil},
		{"canceled is cancelled", context.Canceled, stage.ClassCancelled, nil},
		{"wrapped canceled is cancelled", fmt.Errorf("get: %w", context.Canceled), stage.ClassCancelled, nil},
		{"plain is retryable", errors.New("connection reset"), stage.ClassRetryable, nil},
		{"io error is retryable", io.ErrUnexpectedEOF, stage.ClassRetryable, nil},
		{"Permanent helper", stage.Permanent(errors.New("no")), stage.ClassPermanent, nil},
		{"Retryable helper", stage.Retryable(errors.New("again")), stage.ClassRetryable, nil},
		{"typed error around a deadline keeps its class",
			&stage.Error{Class: stage.ClassPermanent, Err: context.DeadlineExceeded}, stage.ClassPermanent, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := stage.AsError(tt.err)
			require.NotNil(t, got)
			assert.Equal(t, tt.wantClass, got.Class)
			if tt.same != nil {
				assert.Same(t, tt.same, got)
			}
			if tt.same == nil && !errors.As(tt.err, new(*stage.Error)) {
				require.ErrorIs(t, got, tt.err, "the classified error wraps the original")
				assert.NotEmpty(t, got.Message)
			}
		})
	}
}

// The stage doc.go: "every failure has exactly one Class; errors that carry none are
// retryable". A handler returning a *Error without a Class must not come out classless (the
// orchestrator would then treat it as not retryable, since Class("").Retryable() is false).
func TestAsErrorClasslessErrorIsRetryable(t *testing.T) {
	t.Parallel()
	err := &stage.Error{Message: "upstream said 503", Code: 503, RetryAfter: time.Second}
	got := stage.AsError(err)
	assert.Equal(t, stage.ClassRetryable, got.Class)
	assert.Equal(t, 503, got.Code)
	assert.Equal(t, time.Second, got.RetryAfter)
}

func TestErrorUnwrap(t *testing.T) {
	t.Parallel()
	cause := errors.New("cause")
	err := stage.Permanent(cause)
	require.ErrorIs(t, err, cause)
	assert.Equal(t, stage.ClassPermanent, err.Class)
	assert.NotEmpty(t, err.Error())
	withCode := &stage.Error{Class: stage.ClassRetryable, Code: 503, Message: "busy"}
	assert.NotEmpty(t, withCode.Error())
}

func TestClassRetryable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		class stage.Class
		want  bool
	}{
		{stage.ClassRetryable, true},
		{stage.ClassTimeout, true},
		{stage.ClassPermanent, false},
		{stage.ClassCancelled, false},
		{stage.ClassLeaseLost, false},
		{stage.ClassFenced, false},
		{stage.ClassTenantLocked, false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(string(tt.class), func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.class.Retryable())
		})
	}
}

func TestRequestIdempotencyKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  stage.Request
		want string
	}{
		{"first attempt", stage.Request{PlanID: "P", TaskID: "T", Stage: "deploy", Run: 1, Attempt: 1}, "P/T/deploy/1"},
		{"a later attempt of the same run: the same key", stage.Request{PlanID: "P", TaskID: "T", Stage: "deploy", Run: 1, Attempt: 4}, "P/T/deploy/1"},
		{"another run", stage.Request{PlanID: "P", TaskID: "T", Stage: "deploy", Run: 3, Attempt: 12, TenantID: "x", StageIndex: 4}, "P/T/deploy/3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.req.IdempotencyKey())
		})
	}
}

func TestHandlerFunc(t *testing.T) {
	t.Parallel()
	var h stage.Handler = stage.HandlerFunc(func(_ context.Context, req stage.Request) (json.RawMessage, error) {
		return json.RawMessage(`"` + req.Stage + `"`), nil
	})
	out, err := h.Run(context.Background(), stage.Request{Stage: "deploy"})
	require.NoError(t, err)
	assert.JSONEq(t, `"deploy"`, string(out))
}
