package redistest

// NewProxy starts a TCP proxy to s that injects no faults, so a test can cut one client off
// Redis (an outage only it sees) with Cut and bring it back with Restore, while other clients
// still reach Redis. It is stopped when the test ends.
func (s *Server) NewProxy() *FaultProxy {
	s.t.Helper()
	return s.NewFaultProxy(Faults{})
}
