package api

import (
	"fmt"
	"net"
	"net/http"
	"sync"

	"github.com/executor-dev/executor/wire"
)

// Defaults of the event streams' caps (GET /v1/events).
const (
	// DefaultMaxEventStreams caps the streams open at once on one executor.
	DefaultMaxEventStreams = 512
	// DefaultMaxEventStreamsPerClient caps the streams one client (its address) holds open.
	DefaultMaxEventStreamsPerClient = 32
)

// streamRetryAfter is the Retry-After, in seconds, of a stream refused for a cap.
const streamRetryAfter = 5

// streamSlots counts the event streams open, in all and by client, against their caps.
type streamSlots struct {
	max, perClient int

	mu       sync.Mutex
	open     int
	byClient map[string]int
}

func newStreamSlots(max, perClient int) *streamSlots {
	return &streamSlots{max: max, perClient: perClient, byClient: map[string]int{}}
}

// take opens a slot for client, or returns the problem to answer (429 busy, naming the cap
// reached); release frees the slot.
func (s *streamSlots) take(client string) (release func(), refused error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.open >= s.max:
		return nil, s.busy(fmt.Sprintf("the executor streams events to %d clients already, its limit (--max-event-streams)", s.max))
	case s.byClient[client] >= s.perClient:
		return nil, s.busy(fmt.Sprintf("%s has %d event streams open already, the limit per client (--max-event-streams-per-client)", client, s.perClient))
	}
	s.open++
	s.byClient[client]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.open--
			if s.byClient[client]--; s.byClient[client] <= 0 {
				delete(s.byClient, client)
			}
		})
	}, nil
}

func (s *streamSlots) busy(detail string) error {
	return &requestError{status: http.StatusTooManyRequests, typ: wire.ProblemBusy, detail: detail, retryAfter: streamRetryAfter}
}

// clientOf names a request's client for the per-client cap: its address without the port
// (clients behind one proxy share it).
func clientOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
