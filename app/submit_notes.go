package app

import (
	"fmt"

	"github.com/executor-dev/executor/domain/plan"
)

// concurrencyNotes tells, for each of p's concurrency limits (its maxConcurrency, then each
// wave's) above this executor's workers, that it is capped here: an executor runs at most
// its --workers tasks at once, across every plan. Alone (or on the memory store) that is
// the plan's real bound; executors sharing a Redis each claim up to their own workers, so
// the plan may still reach its limit across them. Nothing when every limit fits.
func (s *Service) concurrencyNotes(p *plan.Plan) []string {
	workers := s.launcher.Workers()
	if workers <= 0 {
		return nil
	}
	var notes []string
	note := func(field string, limit int) {
		if limit <= workers {
			return
		}
		n := fmt.Sprintf("%s %d is above this executor's %d workers (serve --workers): it runs at most %d of the plan's tasks at once, fewer while other plans run",
			field, limit, workers, workers)
		if s.avail.Availability().Shared {
			n = fmt.Sprintf("%s %d is above this executor's %d workers (serve --workers): each executor sharing its Redis runs at most its own workers' worth of tasks at once, so the plan reaches %d only across executors whose free workers add up to it",
				field, limit, workers, limit)
		}
		notes = append(notes, n)
	}
	note("maxConcurrency", p.MaxConcurrency())
	for i, w := range p.Rollout().Waves {
		note(fmt.Sprintf("waves[%d].maxConcurrency", i), w.MaxConcurrency)
	}
	return notes
}
