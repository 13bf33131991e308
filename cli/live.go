package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"golang.org/x/term"
)

// polled is one answer of the poll of a live wait: what it read, whether the wait is over
// (done), or its error.
type polled[T any] struct {
	v    T
	done bool
	err  error
}

// followLive runs poll in the background, at once (first) and again after each answer, until
// an answer is done or fails, and redraws on the terminal f the status line that line makes of
// the latest answer (to fit in the terminal's width) at each answer and every redrawEvery. It
// returns the answer that is done, the last line staying on screen, or the error (of poll, or
// ctx's).
func followLive[T any](ctx context.Context, f *os.File, poll func(ctx context.Context, first bool) polled[T],
	line func(v T, width int) string) (T, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	updates := make(chan polled[T])
	go func() {
		for first := true; ; first = false {
			res := poll(ctx, first)
			select {
			case updates <- res:
			case <-ctx.Done():
				return
			}
			if res.err != nil || res.done {
				return
			}
		}
	}()
	width := func() int {
		w, _, err := term.GetSize(int(f.Fd()))
		if err != nil || w <= 0 {
			return 80
		}
		return w
	}
	var last *T
	draw := func() { fmt.Fprintf(f, "\r%s\x1b[K", line(*last, width())) }
	tick := time.NewTicker(redrawEvery)
	defer tick.Stop()
	for {
		select {
		case r := <-updates:
			if r.err != nil {
				if last != nil {
					fmt.Fprintln(f)
				}
				return r.v, r.err
			}
			last = &r.v
			draw()
			if r.done {
				fmt.Fprintln(f)
				return r.v, nil
			}
		case <-tick.C:
			if last != nil {
				draw()
			}
		case <-ctx.Done():
			if last != nil {
				fmt.Fprintln(f)
			}
			var zero T
			return zero, ctx.Err()
		}
	}
}
