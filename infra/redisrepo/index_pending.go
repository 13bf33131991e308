package redisrepo

import (
	"sync"
	"time"

	"github.com/executor-dev/executor/domain/task"
)

// indexRetry is how long rows whose index write failed (Redis away, a lost reply) wait before
// they are written again, unless an index read or the store's Stop writes them first (and the
// write-back writes whole tasks' rows after an outage).
const indexRetry = time.Second

// pendingRows are rows not written to their plans' indexes yet: deferred ones (deferRow) and
// ones whose write failed. At most one per task, the newest; a flush is armed while any wait.
type pendingRows struct {
	mu      sync.Mutex
	rows    map[string]indexedRow // by task id
	timer   *time.Timer           // the armed flush; nil when none is
	delay   time.Duration         // Options.IndexDelay
	stopped bool                  // the store stopped: no flush is armed any more
}

type indexedRow struct {
	planID string
	row    task.Row
}

// add keeps rows, each over an older row of its task.
func (p *pendingRows) add(planID string, rows []task.Row) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rows == nil {
		p.rows = map[string]indexedRow{}
	}
	for _, r := range rows {
		if old, ok := p.rows[r.ID]; !ok || r.Newer(old.row) {
			p.rows[r.ID] = indexedRow{planID: planID, row: r}
		}
	}
}

// drop forgets the waiting rows that rows, about to be written, supersede.
func (p *pendingRows) drop(rows []task.Row) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range rows {
		if old, ok := p.rows[r.ID]; ok && !old.row.Newer(r) {
			delete(p.rows, r.ID)
		}
	}
}

// arm makes flush run in after, unless a flush is armed already or the store stopped.
func (p *pendingRows) arm(after time.Duration, flush func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timer == nil && !p.stopped {
		p.timer = time.AfterFunc(after, flush)
	}
}

// take returns the waiting rows by plan (nil when none) and disarms the flush: the caller
// writes them.
func (p *pendingRows) take() map[string][]task.Row {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	if len(p.rows) == 0 {
		return nil
	}
	out := map[string][]task.Row{}
	for _, r := range p.rows {
		out[r.planID] = append(out[r.planID], r.row)
	}
	p.rows = nil
	return out
}

// stop disarms the flush for good: what still waits stays in memory (the write-back of a
// later start, or a reader's re-indexing, brings the index up to date).
func (p *pendingRows) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
}
