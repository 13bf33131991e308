package wire

// Headers of plan submission.
const (
	// IdempotencyKeyHeader names a submission; repeating the key with the same plan returns
	// the first plan, with another plan is a 422 (ProblemIdempotencyMismatch).
	IdempotencyKeyHeader = "Idempotency-Key"
	// IdempotentReplayedHeader is "true" on the answer to a repeated Idempotency-Key.
	IdempotentReplayedHeader = "Idempotent-Replayed"
)
