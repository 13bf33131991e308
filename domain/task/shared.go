package task

import (
	"context"
	"errors"
)

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

// heldKey carries the predicate of WhileHeld.
type heldKey struct{}

// ErrLeaseExpired is returned by a store asked to send a write made WhileHeld after the
// lease's deadline: the run that made it has stopped, and must write nothing more.
var ErrLeaseExpired = errors.New("task: the run's lease has expired")

// WhileHeld returns ctx marked so that a store sends a write made with it (the first time, or
// again after Redis did not answer) only while held reports true: the run's self-fencing lease
// is still within its deadline. A write sent before the deadline may still land after it (it
// is fenced); none is sent after it.
func WhileHeld(ctx context.Context, held func() bool) context.Context {
	return context.WithValue(ctx, heldKey{}, held)
}

// Held reports whether a write made with ctx may still be sent: true unless ctx was made
// WhileHeld and its predicate now reports false.
func Held(ctx context.Context) bool {
	held, ok := ctx.Value(heldKey{}).(func() bool)
	return !ok || held()
}
