package plan

import "context"

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
	// Save writes a changed plan as a compare-and-set: ErrConflict, writing nothing, when the
	// stored plan is no longer at p's Version. On success p carries the new version (Stored).
	Save(ctx context.Context, p *Plan) error
	// Update applies fn to the plan as stored and saves it (Save); when another writer got
	// there first it reads the plan again and applies fn again, so fn must be a transition of
	// the plan it is given and nothing else. It returns the plan as saved, or fn's error
	// (nothing written), ErrNotFound, or ErrConflict after many lost races in a row.
	Update(ctx context.Context, id string, fn func(p *Plan) error) (*Plan, error)
	// Refresh reads the plan with id again if the store keeps a copy of it that has not ended
	// (a store in front of a shared one: its copy follows a change another executor made, and
	// it lets go of a plan that ended there). A store that keeps no copies does nothing.
	Refresh(ctx context.Context, id string)
}
