package orchestrator

import (
	"hash/fnv"
	"sync"
)

// stripes is a fixed set of mutexes picked by key: cheap per-key locking without a map that
// grows with every task ever seen. Two keys may share a stripe; that only serialises them.
type stripes [256]sync.Mutex

func (s *stripes) lock(key string) func() {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	m := &s[h.Sum32()%uint32(len(s))]
	m.Lock()
	return m.Unlock
}
