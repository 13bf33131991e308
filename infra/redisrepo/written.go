package redisrepo

import (
	"fmt"
	"strconv"
	"sync"
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
	vals    map[string]string
}

// diff returns the field, value pairs of fields that differ from what was written for id at
// fence and version: all of them when nothing is known of that version (another writer may
// have changed any field since).
func (w *writtenFields) diff(id string, fence, version uint64, fields []any) []any {
	w.mu.Lock()
	defer w.mu.Unlock()
	cur := w.tasks[id]
	if cur == nil || cur.fence != fence || cur.version != version {
		return fields
	}
	out := make([]any, 0, 12)
	for i := 0; i+1 < len(fields); i += 2 {
		name := fields[i].(string)
		if v, ok := cur.vals[name]; !ok || v != fieldString(fields[i+1]) {
			out = append(out, fields[i], fields[i+1])
		}
	}
	return out
}

// ledgerLen returns how many ledger attempts are known to be written for id at fence and
// version (0 when nothing is known): a write need not encode them again.
func (w *writtenFields) ledgerLen(id string, fence, version uint64) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	cur := w.tasks[id]
	if cur == nil || cur.fence != fence || cur.version != version {
		return 0
	}
	n, _ := strconv.Atoi(cur.vals["ledger"])
	return n
}

// record notes that the pairs fields were written for id at fence, making it version.
func (w *writtenFields) record(id string, fence, version uint64, fields []any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	cur := w.tasks[id]
	if cur == nil || cur.fence != fence || cur.version+1 != version {
		delete(w.tasks, id) // nothing known of the version before: a partial write says nothing of the rest
		return
	}
	cur.version = version
	for i := 0; i+1 < len(fields); i += 2 {
		cur.vals[fields[i].(string)] = fieldString(fields[i+1])
	}
}

// seed records h as the whole hash of id at fence and version (what the fence bump returned).
func (w *writtenFields) seed(id string, fence, version uint64, h map[string]string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tasks == nil {
		w.tasks = map[string]*written{}
	}
	vals := make(map[string]string, len(h))
	for k, v := range h {
		vals[k] = v
	}
	w.tasks[id] = &written{fence: fence, version: version, vals: vals}
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

// fieldString is a field value as Redis stores it.
func fieldString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	default:
		return fmt.Sprint(v)
	}
}
