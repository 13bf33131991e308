package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/wire"
)

// Polling of --wait and --watch.
const (
	redrawEvery = 500 * time.Millisecond // live line redraw period on a terminal
	livePoll    = time.Second            // ?wait= of each poll behind the live line
	// quietPoll is the ?wait= of each long poll off a terminal. The long poll answers when the
	// plan's status changes; a plan coming to rest (nothing can progress without an operator)
	// keeps its status, so it is noticed at the next poll.
	quietPoll = 5 * time.Second
	// restConfirm is the ?wait= of the poll that confirms a rest: a plan whose last tasks
	// just ended may look at rest for an instant before it settles.
	restConfirm = time.Second
	barWidth    = 20
)

// progressLine renders a plan's progress as one status line that fits in width columns
// (width <= 0: no limit), e.g.
//
//	RUNNING    [#########-----------]  45%  9/20  COMPLETED=8 FAILED=1 RUNNING=5 PENDING=6
//
// The bar and percentage count finished tasks (the terminal statuses: COMPLETED, FAILED,
// CANCELLED, ROLLED_BACK, ROLLBACK_FAILED); the counts are
// every non-zero task status. The line is cut to width-1 columns so that it never wraps.
func progressLine(p wire.Plan, width int) string {
	total := p.Progress["total"]
	done := 0
	for _, s := range task.Statuses {
		if s.Terminal() {
			done += p.Progress[string(s)]
		}
	}
	done = min(done, total)
	pct, filled := 0, 0
	switch {
	case total > 0:
		pct = done * 100 / total
		filled = done * barWidth / total
	case plan.Status(p.Status).Terminal():
		pct, filled = 100, barWidth
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s [%s%s] %3d%%  %d/%d", p.Status,
		strings.Repeat("#", filled), strings.Repeat("-", barWidth-filled), pct, done, total)
	if counts := progressCounts(p.Progress); len(counts) > 0 {
		b.WriteString("  ")
		b.WriteString(strings.Join(counts, " "))
	}
	line := b.String()
	if width > 0 {
		if r := []rune(line); len(r) > width-1 {
			line = strings.TrimRight(string(r[:max(width-1, 0)]), " ")
		}
	}
	return line
}

// terminal returns w as a terminal's file, or nil when it is not one.
func terminal(w io.Writer) *os.File {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return f
}

// liveOutput is where the live progress line goes: stdout when it is a terminal and the
// output is a table (-o table or wide), else stderr when it is a terminal, else nowhere (nil).
func (a *invocation) liveOutput() *os.File {
	if a.tabular() {
		if f := terminal(a.stdout); f != nil {
			return f
		}
	}
	return terminal(a.stderr)
}

// waitPlan waits until the plan is terminal, or at rest (nothing of it can progress without
// an operator: see atRest), and returns it with the rest, nil when it ended. On a terminal it
// redraws a progress line every redrawEvery; otherwise it long-polls quietly.
func (a *invocation) waitPlan(ctx context.Context, c *client.Client, id string) (*wire.Plan, *rest, error) {
	if f := a.liveOutput(); f != nil {
		return watchLive(ctx, c, id, f)
	}
	wait := time.Duration(0) // the first answer at once: a plan may be at rest already
	for {
		p, err := c.Plan(ctx, id, wait)
		if err != nil {
			return nil, nil, err
		}
		p, r, err := settled(ctx, c, p)
		if err != nil || r != nil || plan.Status(p.Status).Terminal() {
			return p, r, err
		}
		wait = quietPoll
	}
}

// settled returns p when it is terminal or not at rest, else p read again after a confirming
// long poll with its rest (nil when it ended or moved on meanwhile).
func settled(ctx context.Context, c *client.Client, p *wire.Plan) (*wire.Plan, *rest, error) {
	if plan.Status(p.Status).Terminal() {
		return p, nil, nil
	}
	r, err := atRest(ctx, c, *p)
	if err != nil || r == nil {
		return p, nil, err
	}
	if p, err = c.Plan(ctx, p.PlanID, restConfirm); err != nil {
		return nil, nil, err
	}
	if plan.Status(p.Status).Terminal() {
		return p, nil, nil
	}
	r, err = atRest(ctx, c, *p)
	return p, r, err
}

// planAnswer is one poll of a plan's live wait: the plan, and its rest when it is at rest.
type planAnswer struct {
	plan *wire.Plan
	rest *rest
}

// watchLive polls the plan (?wait=1s) in the background and redraws its progress line on f
// until the plan is terminal or at rest; the last line stays on screen.
func watchLive(ctx context.Context, c *client.Client, id string, f *os.File) (*wire.Plan, *rest, error) {
	poll := func(ctx context.Context, first bool) polled[planAnswer] {
		wait := livePoll
		if first {
			wait = 0 // the first answer at once, then long polls
		}
		var res polled[planAnswer]
		res.v.plan, res.err = c.Plan(ctx, id, wait)
		if res.err == nil {
			res.v.plan, res.v.rest, res.err = settled(ctx, c, res.v.plan)
		}
		res.done = res.err == nil && (res.v.rest != nil || plan.Status(res.v.plan.Status).Terminal())
		return res
	}
	a, err := followLive(ctx, f, poll, func(a planAnswer, width int) string { return progressLine(*a.plan, width) })
	if err != nil {
		return nil, nil, err
	}
	return a.plan, a.rest, nil
}

// submittedNotice is what submit --wait prints on stderr before it waits: the plan's id and
// status, and for a SCHEDULED plan when it starts, e.g.
//
//	plan 01JD… submitted (SCHEDULED, starts at 2030-01-02T03:04:05Z); waiting for it to end
func submittedNotice(p wire.Plan) string {
	status := p.Status
	if plan.Status(p.Status) == plan.Scheduled && p.StartAt != nil {
		status += ", starts at " + formatTime(p.StartAt)
	}
	return fmt.Sprintf("plan %s submitted (%s); waiting for it to end", p.PlanID, status)
}
