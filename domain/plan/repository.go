package plan

import "context"

// Filter selects plans for a listing, newest first.
type Filter struct {
	Status Status // empty: any
	Before string // a plan id: list plans created before it (paging cursor); empty: from the newest
	Limit  int    // at most this many (callers bound it)
}

// Repository stores plans.
type Repository interface {
	// Create stores a new plan.
	Create(ctx context.Context, p *Plan) error
	// Plan returns the plan with id, or ErrNotFound.
	Plan(ctx context.Context, id string) (*Plan, error)
	// ByIdempotencyKey returns the plan first submitted with key, or ErrNotFound.
	ByIdempotencyKey(ctx context.Context, key string) (*Plan, error)
	// List returns plans matching f, newest first.
	List(ctx context.Context, f Filter) ([]*Plan, error)
	// Save writes a changed plan.
	Save(ctx context.Context, p *Plan) error
}
