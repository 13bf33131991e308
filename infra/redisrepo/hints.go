package redisrepo

import (
	"hash/maphash"
	"sync"

	"github.com/oklog/ulid/v2"
)

// maxLatestHints bounds the tenants whose latest task a store remembers as a guess (hints):
// about 8 MB of heap when full, and no pointer for the garbage collector to follow.
const maxLatestHints = 1 << 18

// latestHints remembers, for the tenants this executor created, ran or read a task of, the id
// of the latest it saw, so that a tenant query reads the index and that task in one round
// trip, the index then confirming the guess (latestWithCheckpointOnline). A guess is never an
// answer: a wrong one (the tenant has a newer task, given by another executor; or two tenants'
// hashes collide) costs the query its second round trip and nothing else. Up to
// maxLatestHints tenants; when full, an arbitrary one makes room for the newest. Keys are
// the tenants' 64-bit hashes and values the ids' 16 bytes, so the map holds no pointer and
// costs the collector nothing to scan.
type latestHints struct {
	mu   sync.Mutex
	seed maphash.Seed
	ids  map[uint64]ulid.ULID
}

func newLatestHints() *latestHints {
	return &latestHints{seed: maphash.MakeSeed(), ids: map[uint64]ulid.ULID{}}
}

// put remembers taskID as tenantID's latest task (an id that is not a ULID is not kept).
func (h *latestHints) put(tenantID, taskID string) {
	id, err := ulid.ParseStrict(taskID)
	if err != nil {
		return
	}
	k := maphash.String(h.seed, tenantID)
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.ids[k]; !ok && len(h.ids) >= maxLatestHints {
		for evict := range h.ids {
			delete(h.ids, evict)
			break
		}
	}
	h.ids[k] = id
}

// get returns the id remembered as tenantID's latest task, if any.
func (h *latestHints) get(tenantID string) (string, bool) {
	k := maphash.String(h.seed, tenantID)
	h.mu.Lock()
	id, ok := h.ids[k]
	h.mu.Unlock()
	if !ok {
		return "", false
	}
	return id.String(), true
}
