package wire

// ProblemContentType is the media type of every error response.
const ProblemContentType = "application/problem+json"

// Problem types: the "type" member of a Problem, one per error class (docs/api.md).
const (
	ProblemInvalidInput         = "urn:executor:problem:invalid-input"          // 400
	ProblemUnauthorized         = "urn:executor:problem:unauthorized"           // 401, with WWW-Authenticate
	ProblemForbidden            = "urn:executor:problem:forbidden"              // 403
	ProblemNotFound             = "urn:executor:problem:not-found"              // 404
	ProblemMethodNotAllowed     = "urn:executor:problem:method-not-allowed"     // 405
	ProblemTenantConflict       = "urn:executor:problem:tenant-conflict"        // 409, with tenants
	ProblemInvalidTransition    = "urn:executor:problem:invalid-transition"     // 409
	ProblemPayloadTooLarge      = "urn:executor:problem:payload-too-large"      // 413
	ProblemUnsupportedMediaType = "urn:executor:problem:unsupported-media-type" // 415
	ProblemIdempotencyMismatch  = "urn:executor:problem:idempotency-mismatch"   // 422, field Idempotency-Key
	ProblemBusy                 = "urn:executor:problem:busy"                   // 429, with Retry-After
	ProblemUnavailable          = "urn:executor:problem:unavailable"            // 503
	ProblemInternal             = "urn:executor:problem:internal"               // 500
)

// Problem is an RFC 9457 problem+json error body.
type Problem struct {
	Type    string         `json:"type"`
	Title   string         `json:"title"`
	Status  int            `json:"status"`
	Detail  string         `json:"detail,omitempty"`
	Field   string         `json:"field,omitempty"` // the first invalid field
	Errors  []FieldProblem `json:"errors,omitempty"`
	Tenants []string       `json:"tenants,omitempty"` // conflicting tenants (409 on submit)

	// ErrorsOmitted counts the invalid fields found beyond the first app.MaxViolations, which
	// errors does not list.
	ErrorsOmitted int `json:"errorsOmitted,omitempty"`
}

// FieldProblem names one invalid field.
type FieldProblem struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
}
