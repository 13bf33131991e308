package auth

import "context"

// roleKey keys the authenticated role in a request context.
type roleKey struct{}

// WithRole returns ctx carrying the role its request was authenticated with.
func WithRole(ctx context.Context, r Role) context.Context {
	return context.WithValue(ctx, roleKey{}, r)
}

// RoleFrom returns the role WithRole put in ctx; false when the request was not
// authenticated (auth disabled, or a public route).
func RoleFrom(ctx context.Context) (Role, bool) {
	r, ok := ctx.Value(roleKey{}).(Role)
	return r, ok
}
