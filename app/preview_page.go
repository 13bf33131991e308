package app

// Bounds of a dry run's page of rendered tenants: a dry run renders and checks every tenant,
// but answers only a page of them (what it answers would otherwise repeat the stages' params
// for every tenant: 20,000 tenants × 64 KiB is 1.3 GB).
const (
	// DefaultPreviewLimit is how many tenants a dry run answers without a limit.
	DefaultPreviewLimit = 20
	// MaxPreviewLimit bounds the tenants one dry run answers.
	MaxPreviewLimit = 100
)

// PreviewPage is the part of a dry run's tenants, in submission order, that it answers:
// Limit tenants from the Offset-th.
type PreviewPage struct {
	Offset int // 0: from the first tenant
	Limit  int // 0: DefaultPreviewLimit
}

// withDefaults returns p with a zero limit as DefaultPreviewLimit.
func (p PreviewPage) withDefaults() PreviewPage {
	if p.Limit == 0 {
		p.Limit = DefaultPreviewLimit
	}
	return p
}

// holds reports whether the tenant at index i of the submission is on the page.
func (p PreviewPage) holds(i int) bool {
	p = p.withDefaults()
	return i >= p.Offset && i-p.Offset < p.Limit
}

// Next is the offset of the page after p for a plan of tenants tenants; 0 when p is the last.
func (p PreviewPage) Next(tenants int) int {
	p = p.withDefaults()
	if p.Offset+p.Limit >= tenants {
		return 0
	}
	return p.Offset + p.Limit
}

// page is which tenants' renders Submit keeps: a dry run's page; none for a submission.
func (req SubmitRequest) page() func(int) bool {
	if !req.DryRun {
		return func(int) bool { return false }
	}
	return req.Page.holds
}
