package task

import "context"

// sharedKey marks a context whose writes must reach the shared store (MustShare).
type sharedKey struct{}

// MustShare returns ctx marked so that a task or plan written with it reaches the store every
// executor shares, or is not written at all: a store that keeps writes on this executor alone
// while the shared one is away (the Redis store, degraded) answers its outage instead, and
// changes nothing. An operator's command on what another executor may be running is made
// with it: it is acknowledged only once every executor can see it, never journaled for a
// write-back that may come too late (the run elsewhere finished meanwhile).
func MustShare(ctx context.Context) context.Context {
	return context.WithValue(ctx, sharedKey{}, true)
}

// MustBeShared reports whether ctx was marked by MustShare.
func MustBeShared(ctx context.Context) bool {
	v, _ := ctx.Value(sharedKey{}).(bool)
	return v
}
