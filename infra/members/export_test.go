package members

// Crash stops r's refresh loop the way a killed process stops: nothing is cleaned up (its
// liveness key expires after the TTL; its entry stays). A later Stop does nothing.
func Crash(r *Redis) {
	r.life.Lock()
	defer r.life.Unlock()
	if !r.started || r.stopped {
		return
	}
	r.stopped = true
	r.cancel()
	<-r.done
}
