package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/wire"
)

// planOutcomeLine is the line under an ended plan's row that says how it ended: "outcome:
// every tenant done", or, for a plan that completed with tenants cancelled or skipped one
// by one, how many and the command that lists them. Nothing for a plan that has not ended,
// nor for a FAILED or CANCELLED one (its status says it).
func planOutcomeLine(w io.Writer, p wire.Plan) {
	switch p.Outcome {
	case app.OutcomeDone:
		fmt.Fprintf(w, "outcome: every tenant done (%d)\n", p.Progress["COMPLETED"])
	case app.OutcomeDoneExceptions:
		fmt.Fprintf(w, "outcome: done, with %s: executor plan tasks %s --status CANCELLED,SKIPPED\n",
			exceptionCounts(p), p.PlanID)
	}
}

// exceptionCounts is "1 cancelled, 2 skipped" (the non-zero ones) of a plan's progress.
func exceptionCounts(p wire.Plan) string {
	var parts []string
	for _, st := range []string{"CANCELLED", "SKIPPED"} {
		if n := p.Progress[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, strings.ToLower(st)))
		}
	}
	return strings.Join(parts, ", ")
}
