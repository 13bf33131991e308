package lock

import "sync"

// loss is a lease's loss: a channel closed at most once (Lost), and the funcs registered to
// run then (AfterLost), so that a holder needs no goroutine of its own waiting on the channel.
// The zero value is not usable: newLoss.
type loss struct {
	mu   sync.Mutex
	ch   chan struct{}
	done bool
	fns  map[*func()]struct{}
}

// newLoss returns a loss not yet happened.
func newLoss() *loss { return &loss{ch: make(chan struct{})} }

// lost is closed once the loss happened.
func (l *loss) lost() <-chan struct{} { return l.ch }

// fire makes the loss happen: it closes the channel and starts every registered func on a
// goroutine of its own. Only the first call does anything.
func (l *loss) fire() {
	l.mu.Lock()
	if l.done {
		l.mu.Unlock()
		return
	}
	l.done = true
	close(l.ch)
	fns := l.fns
	l.fns = nil
	l.mu.Unlock()
	for f := range fns {
		go (*f)()
	}
}

// after arranges for f to run on a goroutine of its own once the loss happens, at once if it
// has. stop unregisters f and reports whether it stopped f from being run (as
// context.AfterFunc's).
func (l *loss) after(f func()) (stop func() bool) {
	key := &f
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		go f()
		return func() bool { return false }
	}
	if l.fns == nil {
		l.fns = map[*func()]struct{}{}
	}
	l.fns[key] = struct{}{}
	return func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		if _, ok := l.fns[key]; !ok {
			return false
		}
		delete(l.fns, key)
		return true
	}
}
