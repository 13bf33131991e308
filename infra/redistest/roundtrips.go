package redistest

import (
	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/infra/roundtrips"
)

// CountingClient returns a new client for the server whose round trips are counted.
func (s *Server) CountingClient() (*redis.Client, *roundtrips.Counter) {
	c := s.Client()
	rt := &roundtrips.Counter{}
	c.AddHook(rt)
	return c, rt
}
