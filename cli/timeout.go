package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

// statusRead bounds the read that names where a plan or task stood when a wait's --timeout
// passed.
const statusRead = 5 * time.Second

// errWaitTimeout is the cause of a wait's context whose --timeout passed.
var errWaitTimeout = errors.New("the wait's --timeout passed")

// timeoutFlag declares --timeout on cmd, the bound of its wait flag waitFlag (--wait,
// --watch).
func timeoutFlag(cmd *cobra.Command, d *time.Duration, waitFlag string) {
	cmd.Flags().DurationVar(d, "timeout", 0, fmt.Sprintf("with --%s: stop waiting after this long (10m), exit %d (0: no limit)", waitFlag, ExitTimeout))
}

// checkTimeout refuses a negative --timeout, and one without its wait flag.
func checkTimeout(cmd *cobra.Command, d time.Duration, waitFlag string, waiting bool) error {
	switch {
	case d < 0:
		return usagef("invalid --timeout %s: want a duration of 0 (no limit) or more", d)
	case !waiting && cmd.Flags().Changed("timeout"):
		return usagef("--timeout goes with --%s", waitFlag)
	}
	return nil
}

// waitContext is ctx bounded by a wait's --timeout d (0: no bound), its cause errWaitTimeout.
func waitContext(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, d, errWaitTimeout)
}

// timedOut reports whether wait, a context of waitContext on parent, ended because its
// --timeout passed (not because parent ended: Ctrl-C).
func timedOut(parent, wait context.Context) bool {
	return parent.Err() == nil && errors.Is(context.Cause(wait), errWaitTimeout)
}

// timeoutError is the failure of a wait whose --timeout d passed while what it waits on
// (where it stood, "plan P (RUNNING ...)") goes on, with the command that follows it again.
func timeoutError(d time.Duration, what, follow string) error {
	return &exitError{
		code: ExitTimeout,
		msg:  fmt.Sprintf("timed out after %s waiting for %s; it goes on: %s", d, what, follow),
		kind: kindTimeout,
	}
}
