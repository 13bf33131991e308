//go:build chaos

package chaos

import (
	"math/rand"
	"sync"
	"time"
)

// Rand is a math/rand source safe for the run's goroutines, seeded from Config.Seed so that
// the choices of a run (not their timing) can be replayed with CHAOS_SEED.
type Rand struct {
	mu sync.Mutex
	r  *rand.Rand
}

// NewRand returns a source seeded with seed.
func NewRand(seed int64) *Rand { return &Rand{r: rand.New(rand.NewSource(seed))} }

// Intn returns a number in [0, n).
func (r *Rand) Intn(n int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.r.Intn(n)
}

// Between returns a number in [lo, hi].
func (r *Rand) Between(lo, hi int) int { return lo + r.Intn(hi-lo+1) }

// Float64 returns a number in [0, 1).
func (r *Rand) Float64() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.r.Float64()
}

// Int63 returns a non-negative number, to seed another source.
func (r *Rand) Int63() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.r.Int63()
}

// Jitter returns d ± half of d.
func (r *Rand) Jitter(d time.Duration) time.Duration {
	return d/2 + time.Duration(r.Float64()*float64(d))
}

// Perm returns a random permutation of [0, n).
func (r *Rand) Perm(n int) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.r.Perm(n)
}
