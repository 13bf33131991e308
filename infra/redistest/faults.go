package redistest

import (
	"math/rand"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// FaultKind is what the proxy does to one request chunk.
type FaultKind int

// Fault kinds.
const (
	// Pass forwards the chunk at once.
	Pass FaultKind = iota
	// Drop drops the connection (both its sides closed) before the chunk is forwarded: Redis
	// never sees the request; the client reads EOF or a reset.
	Drop
	// LoseReply forwards the chunk and drops the connection just after: Redis applies the
	// request but its reply is lost.
	LoseReply
	// Delay holds the chunk for Fault.Hold. By default (1.5 s, past the executor's 1 s client
	// timeout) the client has timed out, closed the connection and retried on another one by
	// then. With Fault.Late the chunk is then forwarded anyway (unless the proxy is cut or
	// closed meanwhile): Redis applies the request late, after the client's retry, so twice
	// in all and out of order, as a request stuck in the network would be. Without Late it is
	// discarded with its connection: a request lost in the network, which Redis never sees.
	Delay
	// StallReply forwards the chunk and keeps the connection open, but from then on no reply
	// on it reaches the client: Redis applies the request, and the client waits for its read
	// timeout, as behind a reply path that went black. Meanwhile the client's other
	// connections work: it can read what Redis applied before it learns that the write
	// failed.
	StallReply
)

// Fault is the proxy's decision for one request chunk.
type Fault struct {
	Kind FaultKind
	Hold time.Duration // Delay: how long; 0 means Faults.Hold
	Late bool          // Delay: forward the chunk after Hold instead of discarding it
}

// Faults configures a FaultProxy.
//
// The proxy decides once per request chunk: one successful Read from the client side of a
// connection, which is what go-redis sends with one flush, i.e. one command or one whole
// pipeline (a pipeline larger than the proxy's 64 KiB read buffer, or one that the kernel
// splits, is decided chunk by chunk). Replies (server to client) are copied untouched.
//
// While injecting (Inject), each chunk gets Rule's decision when Rule is set; otherwise the
// proxy draws r from a math/rand source seeded with Seed (one source per proxy, drawn under
// a mutex, so the sequence of decisions is reproducible; which connection gets which
// decision still depends on goroutine scheduling), and the chunk is dropped with
// probability Drop, has its reply lost with probability LoseReply, is delayed for Hold
// (late with Late) with probability Delay, and passes otherwise.
//
// After any fault go-redis (MaxRetries 1 in the executor) sends the request once more, on a
// new connection: with LoseReply and late delays, Redis applies it twice.
type Faults struct {
	Seed      int64
	Drop      float64       // probability per chunk of Drop
	LoseReply float64       // probability per chunk of LoseReply
	Delay     float64       // probability per chunk of Delay
	Hold      time.Duration // how long Delay holds a chunk; default 1500ms
	Late      bool          // random delays are late (see Delay)
	// Rule, when set, decides every chunk instead of the random draw. It is called under the
	// proxy's lock, one chunk at a time.
	Rule func(chunk []byte) Fault
}

// FaultStats counts the proxy's decisions while injecting.
type FaultStats struct {
	Chunks      int64 // chunks decided
	Dropped     int64 // connections dropped before forwarding the chunk
	RepliesLost int64 // chunks forwarded whose reply was lost (LoseReply, StallReply)
	Delayed     int64 // chunks held
}

// FaultProxy is a TCP proxy in front of a Server that injects Faults into its clients'
// traffic while injecting is on (Inject), and can cut them off Redis altogether (Cut,
// Restore) as Proxy does.
type FaultProxy struct {
	t      testing.TB
	target string
	ln     net.Listener
	faults Faults

	mu     sync.Mutex
	rng    *rand.Rand
	inject bool
	cut    bool
	closed chan struct{} // closed when the proxy closes
	cutCh  chan struct{} // closed (and replaced) at every Cut
	conns  map[net.Conn]bool
	stats  FaultStats
	wg     sync.WaitGroup
}

// NewFaultProxy starts a fault-injecting proxy to s on a free loopback port, injecting
// nothing until Inject(true); it is stopped when the test ends.
func (s *Server) NewFaultProxy(f Faults) *FaultProxy {
	s.t.Helper()
	if f.Hold <= 0 {
		f.Hold = 1500 * time.Millisecond
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.t.Fatalf("redistest: fault proxy: %v", err)
	}
	p := &FaultProxy{
		t: s.t, target: s.Addr(), ln: ln, faults: f,
		rng:    rand.New(rand.NewSource(f.Seed)),
		closed: make(chan struct{}), cutCh: make(chan struct{}),
		conns: map[net.Conn]bool{},
	}
	p.wg.Add(1)
	go p.accept()
	s.t.Cleanup(p.close)
	return p
}

// Addr returns the proxy's host:port.
func (p *FaultProxy) Addr() string { return p.ln.Addr().String() }

// URL returns a redis:// URL through the proxy.
func (p *FaultProxy) URL() string { return "redis://" + p.Addr() + "/0" }

// Inject turns fault injection on or off. Chunks already held keep their delay.
func (p *FaultProxy) Inject(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inject = on
}

// Stats returns the decisions so far.
func (p *FaultProxy) Stats() FaultStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Cut closes every connection (discarding held chunks) and refuses new ones until Restore.
func (p *FaultProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	close(p.cutCh)
	p.cutCh = make(chan struct{})
	for c := range p.conns {
		_ = c.Close()
	}
}

// Restore lets connections through again.
func (p *FaultProxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

func (p *FaultProxy) decide(chunk []byte) Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.inject {
		return Fault{}
	}
	f := p.faults
	var d Fault
	if f.Rule != nil {
		d = f.Rule(chunk)
	} else {
		switch r := p.rng.Float64(); {
		case r < f.Drop:
			d.Kind = Drop
		case r < f.Drop+f.LoseReply:
			d.Kind = LoseReply
		case r < f.Drop+f.LoseReply+f.Delay:
			d = Fault{Kind: Delay, Late: f.Late}
		}
	}
	if d.Kind == Delay && d.Hold <= 0 {
		d.Hold = f.Hold
	}
	p.stats.Chunks++
	switch d.Kind {
	case Drop:
		p.stats.Dropped++
	case LoseReply, StallReply:
		p.stats.RepliesLost++
	case Delay:
		p.stats.Delayed++
	}
	return d
}

func (p *FaultProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		p.conns[c], p.conns[up] = true, true
		cutCh := p.cutCh
		p.mu.Unlock()
		p.wg.Add(2)
		mute := new(atomic.Bool) // set by a StallReply: the replies go nowhere
		go p.requests(c, up, cutCh, mute)
		go p.replies(up, c, mute)
	}
}

// requests forwards the client's chunks to Redis, deciding each one's fate.
func (p *FaultProxy) requests(c, up net.Conn, cutCh <-chan struct{}, mute *atomic.Bool) {
	defer p.wg.Done()
	defer p.closePair(c, up)
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			d := p.decide(buf[:n])
			switch d.Kind {
			case Drop:
				return
			case StallReply:
				mute.Store(true)
			case Delay:
				timer := time.NewTimer(d.Hold)
				select {
				case <-timer.C:
					if !d.Late {
						return
					}
				case <-cutCh:
					timer.Stop()
					return
				case <-p.closed:
					timer.Stop()
					return
				}
			}
			if _, werr := up.Write(buf[:n]); werr != nil || d.Kind == LoseReply {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// replies copies Redis's replies back to the client (none once muted by a StallReply).
func (p *FaultProxy) replies(up, c net.Conn, mute *atomic.Bool) {
	defer p.wg.Done()
	defer p.closePair(c, up)
	buf := make([]byte, 64<<10)
	for {
		n, err := up.Read(buf)
		if n > 0 && !mute.Load() {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *FaultProxy) closePair(c, up net.Conn) {
	_ = c.Close()
	_ = up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

func (p *FaultProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	select {
	case <-p.closed:
	default:
		close(p.closed)
	}
	p.mu.Unlock()
	p.Cut()
	p.wg.Wait()
}
