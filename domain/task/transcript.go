package task

import "cmp"

// TranscriptsKept bounds the transcripts (stage.Transcript: what an attempt printed) a store
// keeps per task: beyond it, the oldest (AttemptKey.Compare) go.
const TranscriptsKept = 20

// AttemptKey names one entry of a task's attempt ledger: the stage, the run and the attempt
// within the run. A run only ever writes its own attempts' keys, so what it keeps beside an
// entry (its transcript) cannot overwrite another run's.
type AttemptKey struct {
	StageIndex int
	Run        int
	Attempt    int
}

// Key returns the key of the ledger entry a.
func (a Attempt) Key() AttemptKey {
	return AttemptKey{StageIndex: a.StageIndex, Run: a.Run, Attempt: a.Attempt}
}

// Compare orders keys as their attempts ran: by run, then stage, then attempt. It returns -1,
// 0 or +1 as k runs before, is, or runs after o.
func (k AttemptKey) Compare(o AttemptKey) int {
	return cmp.Or(cmp.Compare(k.Run, o.Run), cmp.Compare(k.StageIndex, o.StageIndex), cmp.Compare(k.Attempt, o.Attempt))
}
