package auth

import "context"

// holderKey keys the authenticated holder in a request context.
type holderKey struct{}

// WithHolder returns ctx carrying who its request was authenticated as.
func WithHolder(ctx context.Context, h Holder) context.Context {
	return context.WithValue(ctx, holderKey{}, h)
}

// HolderFrom returns the holder WithHolder put in ctx; false when the request was not
// authenticated (auth disabled, or a public route).
func HolderFrom(ctx context.Context) (Holder, bool) {
	h, ok := ctx.Value(holderKey{}).(Holder)
	return h, ok
}

// RoleFrom returns the role of the holder WithHolder put in ctx; false when the request was
// not authenticated.
func RoleFrom(ctx context.Context) (Role, bool) {
	h, ok := HolderFrom(ctx)
	return h.Role, ok
}
