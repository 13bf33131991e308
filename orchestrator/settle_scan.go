package orchestrator

import (
	"context"
	"sync"

	"github.com/executor-dev/executor/domain/task"
)

// settleChunk is how many task statuses a settle reads at a time.
const settleChunk = 1000

// maxWitnesses bounds the plans a settleWitnesses remembers (beyond, it starts afresh).
const maxWitnesses = 10_000

// settleWitnesses remembers, per plan, the position of the task a settle last found not
// ended: the next settle of the plan reads from there first. A settle runs at every task's
// end once a plan's queue is empty; reading all of a 100,000-task plan's statuses each time
// (99,000 tasks WAITING at a gate while 1,000 approved ones end) made settling quadratic.
// With a witness, a settle that finds the plan still open reads one chunk in the common case.
type settleWitnesses struct {
	mu sync.Mutex
	at map[string]int
}

func (w *settleWitnesses) get(planID string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.at[planID]
}

func (w *settleWitnesses) set(planID string, i int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.at == nil || len(w.at) >= maxWitnesses {
		w.at = map[string]int{}
	}
	w.at[planID] = i
}

func (w *settleWitnesses) forget(planID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.at, planID)
}

// settledStatus reports whether a task in status st lets its plan settle: it ended
// (INTERRUPTED included: an SRE retries it) or the store lost it. Any other status, and one
// added later, keeps the plan open.
func settledStatus(st task.Status) bool {
	return st.Settled() || st == statusMissing
}

// witnessIn returns the index in statuses of the best witness that a plan is open: a task
// waiting for an operator if there is one, else any task not ended; -1 when all ended.
func witnessIn(statuses []task.Status) int {
	w := -1
	for i, st := range statuses {
		switch {
		case st == task.Waiting || st == task.Paused:
			return i
		case w < 0 && !settledStatus(st):
			w = i
		}
	}
	return w
}

// planStatuses reads the statuses of a plan's tasks (ids) for settling. It reads the plan's
// witness first: still not ended, the plan is open (one status read). Otherwise it reads a
// chunk at a time from the witness on (wrapping around) and stops at the first chunk holding
// a task that has not ended (open), which becomes the witness: one that waits for an operator
// (WAITING, PAUSED) rather than one about to end (PENDING, RUNNING). Only a plan whose tasks
// have all ended is read whole: every status, in ids' order, each read with its chunk.
func (s *settler) planStatuses(ctx context.Context, planID string, ids []string) (statuses []task.Status, open bool, err error) {
	n := len(ids)
	start := s.settler.witnesses.get(planID)
	if start >= n {
		start = 0
	}
	if n > 1 {
		st, err := s.statusesOf(ctx, ids[start:start+1])
		if err != nil {
			return nil, false, err
		}
		if !settledStatus(st[0]) {
			return nil, true, nil
		}
	}
	out := make([]task.Status, n)
	for done := 0; done < n; {
		lo := (start + done) % n
		hi := min(lo+settleChunk, n, lo+n-done)
		st, err := s.statusesOf(ctx, ids[lo:hi])
		if err != nil {
			return nil, false, err
		}
		if w := witnessIn(st); w >= 0 {
			s.settler.witnesses.set(planID, lo+w)
			return nil, true, nil
		}
		copy(out[lo:hi], st)
		done += hi - lo
	}
	return out, false, nil
}
