package app

// Default limits of a submission (Limits' zero fields take these).
const (
	DefaultMaxTenants     = 100_000
	DefaultMaxStages      = 100
	DefaultMaxParamsBytes = 64 << 10 // the plan's stage params, or one tenant's params, as JSON
	DefaultMaxQueued      = 250_000
)

// Limits bound what one submission may ask for, and how much work the executor queues.
// Zero fields take the defaults above.
type Limits struct {
	MaxTenants     int // tenants per plan
	MaxStages      int // stages per plan
	MaxParamsBytes int // JSON size of the stages' params, and of each tenant's params
	// MaxQueued bounds the tasks waiting to start across every plan; a submission that would
	// queue more is refused with ErrBusy (HTTP 429 with Retry-After).
	MaxQueued int
}

func (l Limits) withDefaults() Limits {
	if l.MaxTenants <= 0 {
		l.MaxTenants = DefaultMaxTenants
	}
	if l.MaxStages <= 0 {
		l.MaxStages = DefaultMaxStages
	}
	if l.MaxParamsBytes <= 0 {
		l.MaxParamsBytes = DefaultMaxParamsBytes
	}
	if l.MaxQueued <= 0 {
		l.MaxQueued = DefaultMaxQueued
	}
	return l
}
