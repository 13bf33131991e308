package orchestrator

import (
	"context"
	"log/slog"
	"time"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// transcriptTimeout bounds the write of an attempt's transcript: diagnostics, which never
// hold a run for long.
const transcriptTimeout = 2 * time.Second

// keepTranscript keeps what attempt entry printed (printed, nil when its handler kept nothing)
// beside its ledger entry (Config.Transcripts), the secrets its params read hidden (red),
// best effort: a write that fails (Redis away, too slow) is logged and the run goes on
// without it. It is keyed by the entry's stage, run and attempt, which are this run's own: a
// stale run writes no other attempt's transcript. Nothing printed: nothing is written.
func (run *taskRun) keepTranscript(entry task.Attempt, red *stage.Redactor, printed *stage.Transcript, log *slog.Logger) {
	store := run.o.cfg.Transcripts
	if store == nil || printed == nil || (printed.Stdout == "" && printed.Stderr == "") {
		return
	}
	t := red.Transcript(*printed)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(run.ctx), transcriptTimeout)
	defer cancel()
	if err := store.KeepTranscript(ctx, run.id, entry.Key(), t); err != nil {
		log.Warn("stage output not kept", "stage_attempt", entry.Attempt, "err", err)
	}
}
