package app

// Default limits of a submission (Limits' zero fields take these).
const (
	DefaultMaxTenants     = 100_000
	DefaultMaxStages      = 100
	DefaultMaxParamsBytes = 64 << 10 // the plan's stage params, or one tenant's params, as JSON
	DefaultMaxQueued      = 250_000
	DefaultMaxLabels      = 64
	// DefaultMaxLabelValueBytes bounds a label's value: labels are listed with every plan
	// (GET /v1/plans), so 64 labels of any size would make each listing as large as they are.
	DefaultMaxLabelValueBytes = 256
	// DefaultMaxRenderSteps bounds the {{range}} iterations of every tenant's params rendered
	// together at submission (each stage's params for one tenant: stage.MaxRangeSteps).
	DefaultMaxRenderSteps = 10_000_000
	// DefaultMaxRenderBytes bounds what every tenant's params write, and the strings the
	// template functions make, rendered together at submission (what a dry run answers, too).
	DefaultMaxRenderBytes = 64 << 20
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
	// MaxLabels and MaxLabelValueBytes bound a plan's labels.
	MaxLabels          int
	MaxLabelValueBytes int
	// MaxRenderSteps and MaxRenderBytes bound the rendering of every tenant's params at
	// submission together: {{range}} iterations, and bytes written or made.
	MaxRenderSteps int64
	MaxRenderBytes int64
}

func (l Limits) withDefaults() Limits {
	l.MaxTenants = orDefault(l.MaxTenants, DefaultMaxTenants)
	l.MaxStages = orDefault(l.MaxStages, DefaultMaxStages)
	l.MaxParamsBytes = orDefault(l.MaxParamsBytes, DefaultMaxParamsBytes)
	l.MaxQueued = orDefault(l.MaxQueued, DefaultMaxQueued)
	l.MaxLabels = orDefault(l.MaxLabels, DefaultMaxLabels)
	l.MaxLabelValueBytes = orDefault(l.MaxLabelValueBytes, DefaultMaxLabelValueBytes)
	l.MaxRenderSteps = orDefault(l.MaxRenderSteps, DefaultMaxRenderSteps)
	l.MaxRenderBytes = orDefault(l.MaxRenderBytes, DefaultMaxRenderBytes)
	return l
}

// orDefault is v, or d when v is not positive (a limit left unset).
func orDefault[T int | int64](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}
