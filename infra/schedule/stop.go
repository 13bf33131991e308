package schedule

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// errNoDue: Start was called before SetDue.
var errNoDue = errors.New("schedule: start: no Due callback (SetDue)")

// awaitClosed waits until done is closed, or until ctx ends.
func awaitClosed(ctx context.Context, done <-chan struct{}) error {
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("schedule: stop: %w", ctx.Err())
	}
}

// awaitCalls waits for the Due calls in flight to return, or until ctx ends (they return by
// themselves then: their context is cancelled before).
func awaitCalls(ctx context.Context, calls *sync.WaitGroup) error {
	returned := make(chan struct{})
	go func() { calls.Wait(); close(returned) }()
	return awaitClosed(ctx, returned)
}
