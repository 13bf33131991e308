package stage_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/executor-dev/executor/domain/stage"
)

// KeyRun, when set, replaces Run in the Idempotency-Key: the retry of an in-doubt attempt
// sends that attempt's key.
func TestRequestIdempotencyKeyOfAnInDoubtRetry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  stage.Request
		want string
	}{
		{"no key run: the run's key", stage.Request{PlanID: "P", TaskID: "T", Stage: "deploy", Run: 3}, "P/T/deploy/3"},
		{"key run: the in-doubt run's key", stage.Request{PlanID: "P", TaskID: "T", Stage: "deploy", Run: 3, KeyRun: 1}, "P/T/deploy/1"},
		{"key run on a later attempt: the same", stage.Request{PlanID: "P", TaskID: "T", Stage: "deploy", Run: 3, Attempt: 2, KeyRun: 2}, "P/T/deploy/2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.req.IdempotencyKey())
		})
	}
}

func TestRequestFenceToken(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  stage.Request
		want string
	}{
		{"a run's epoch", stage.Request{TenantID: "tenant-001", Fence: 7}, "tenant-001:7"},
		{"a large epoch", stage.Request{TenantID: "t.a_b-c", Fence: 18446744073709551615}, "t.a_b-c:18446744073709551615"},
		{"no fenced run", stage.Request{TenantID: "t1"}, "t1:0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.req.FenceToken())
		})
	}
}
