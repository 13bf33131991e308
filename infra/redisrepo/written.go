package redisrepo

import (
	"strconv"
	"sync"

	"github.com/executor-dev/executor/domain/task"
)

// writtenFields remembers, for each task a run of this executor is running, the task hash's
// fields as Redis holds them at the run's fence epoch: seeded by the fence bump (which
// returns the hash), updated by every write save_task.lua reported saved. A run's next write
// then sends only the fields that changed (a stage transition: the stage, its times and one
// ledger entry), not the whole hash: less to encode, send and store per transition.
//
// What is remembered is tied to the version it describes: an operator's write (a pause, a
// cancel) advances the stored version, and the run's next write, at the older version, is a
// conflict; the run reads the task again and writes whole. Anything else forgets too: a write
// that failed or was fenced, a run that stopped RUNNING; and an outage forgets everything
// (the write-back after it writes whole tasks behind the memory's back).
type writtenFields struct {
	mu    sync.Mutex
	tasks map[string]*written
}

type written struct {
	fence   uint64
	version uint64 // the stored version vals describe
	known   uint16 // bit i set: vals[i] is field i as stored (a field never seen is sent)
	vals    [nRunFields]string
}

// allRunFields has a bit set for every field of runValues.vals.
const allRunFields = uint16(1)<<nRunFields - 1

// diff appends to dst the field, value pairs of v that differ from what was written for id
// at fence and version (all of them when nothing is known of that version: another writer may
// have changed any field since), and v's ledger attempts; sent says which fields it appended.
func (w *writtenFields) diff(id string, fence, version uint64, v *runValues, dst []any) (_ []any, sent uint16) {
	w.mu.Lock()
	cur := w.tasks[id]
	if cur != nil && (cur.fence != fence || cur.version != version) {
		cur = nil
	}
	for i := range runFieldNames {
		if cur == nil || cur.known&(1<<i) == 0 || cur.vals[i] != v.vals[i] {
			dst = append(dst, runFieldArgs[i], v.vals[i])
			sent |= 1 << i
		}
	}
	w.mu.Unlock()
	return v.ledgerPairs(dst), sent
}

// running reports whether id is known to be RUNNING in Redis at fence and version (a run's
// write of it, or the fence bump, said so).
func (w *writtenFields) running(id string, fence, version uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	cur := w.tasks[id]
	return cur != nil && cur.fence == fence && cur.version == version && cur.known&(1<<fStatus) != 0 &&
		cur.vals[fStatus] == string(task.Running)
}

// ledgerLen returns how many ledger attempts are known to be written for id at fence and
// version (0 when nothing is known): a write need not encode them again.
func (w *writtenFields) ledgerLen(id string, fence, version uint64) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	cur := w.tasks[id]
	if cur == nil || cur.fence != fence || cur.version != version || cur.known&(1<<fLedger) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(cur.vals[fLedger])
	return n
}

// record notes that the fields of v in sent were written for id at fence, making it version.
func (w *writtenFields) record(id string, fence, version uint64, v *runValues, sent uint16) {
	w.mu.Lock()
	defer w.mu.Unlock()
	cur := w.tasks[id]
	if cur == nil || cur.fence != fence || cur.version+1 != version {
		delete(w.tasks, id) // nothing known of the version before: a partial write says nothing of the rest
		return
	}
	cur.version = version
	cur.known |= sent
	for i := range v.vals {
		if sent&(1<<i) != 0 {
			cur.vals[i] = v.vals[i]
		}
	}
}

// seed records h as the whole hash of id at fence and version (what the fence bump returned).
func (w *writtenFields) seed(id string, fence, version uint64, h map[string]string) {
	cur := &written{fence: fence, version: version}
	for i, name := range runFieldNames {
		if v, ok := h[name]; ok {
			cur.vals[i] = v
			cur.known |= 1 << i
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tasks == nil {
		w.tasks = map[string]*written{}
	}
	w.tasks[id] = cur
}

// forget drops what is known of id.
func (w *writtenFields) forget(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.tasks, id)
}

// clear drops everything.
func (w *writtenFields) clear() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tasks = nil
}
