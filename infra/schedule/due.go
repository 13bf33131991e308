package schedule

import "context"

// Due starts plan planID, whose time has come. It returns nil once the plan is started or
// needs no start any more (cancelled, already started): the entry is then removed. An error
// leaves the entry to be retried (Redis: after ClaimTTL; memory: after RetryDelay).
//
// Due may be called more than once for one entry (at-least-once delivery, e.g. after a
// claimer crashed), so it must check the plan's status before starting it. It is called in
// a goroutine of its own, with a context cancelled when the scheduler stops.
type Due func(ctx context.Context, planID string) error
