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

// FaultStats counts the proxy's decisions while injecting (Chunks, Dropped, RepliesLost,
// Delayed), and what the partitions did whether injecting or not (BlackHoled, Lagged).
type FaultStats struct {
	Chunks      int64 // chunks decided
	Dropped     int64 // connections dropped before forwarding the chunk
	RepliesLost int64 // chunks forwarded whose reply was lost (LoseReply, StallReply)
	Delayed     int64 // chunks held
	BlackHoled  int64 // chunks (requests and replies) that vanished in a black hole (BlackHole)
	Lagged      int64 // request chunks delayed by the link's latency (SetLatency)
}

// FaultProxy is a TCP proxy in front of a Server that injects Faults into its clients'
// traffic while injecting is on (Inject), and can partition them from Redis: Cut (resets:
// connections closed, new ones refused), BlackHole (a dropped route: connections stay open,
// nothing gets through) and SetLatency (a slow link), until Restore (SetLatency(0)).
type FaultProxy struct {
	t      testing.TB
	target string
	ln     net.Listener
	faults Faults

	mu        sync.Mutex
	rng       *rand.Rand
	inject    bool
	cut       bool
	closed    chan struct{} // closed when the proxy closes
	cutCh     chan struct{} // closed (and replaced) at every Cut
	conns     map[net.Conn]bool
	stats     FaultStats
	blackHole atomic.Bool  // BlackHole until Restore
	latency   atomic.Int64 // SetLatency: the request path's delay, in nanoseconds
	wg        sync.WaitGroup
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

// Restore lets connections through again: it ends a Cut and a BlackHole (not a latency:
// SetLatency(0) does).
func (p *FaultProxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
	p.blackHole.Store(false)
}

// BlackHole partitions the proxy's clients from Redis as a dropped route does, until Restore:
// connections stay open and new ones are accepted, but nothing is forwarded in either
// direction. Requests vanish (Redis never sees them) and so do replies (Redis applied a
// request whose reply the client never reads), including the pushes of a subscription and a
// blocked command's late answer: the client learns of the partition only from its own
// timeouts. A chunk is lost for good, not delivered after Restore (by then a client has timed
// out and closed the connection, as it does behind a real dropped route), so a connection
// that lost nothing while black-holed works on after Restore.
func (p *FaultProxy) BlackHole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blackHole.Store(true)
}

// SetLatency delays every request chunk read from now on by d before it is forwarded (decided
// and forwarded as usual then, never dropped for it), in order per connection: a chunk waits
// for d from its arrival, or behind the chunk before it on its connection, whichever is later,
// as on a link whose one-way delay is d, so a client's round trip grows by d. A request whose
// client timed out meanwhile still reaches Redis, late, as it would through a slow network.
// Replies are not delayed. SetLatency(0) ends it: chunks already delayed keep their delay
// (and the order), later ones pass at once behind them.
func (p *FaultProxy) SetLatency(d time.Duration) {
	p.latency.Store(int64(max(d, 0)))
}

// swallowed reports whether the proxy is black-holed; if it is, it counts n chunks lost.
func (p *FaultProxy) swallowed(n int64) bool {
	if !p.blackHole.Load() {
		return false
	}
	p.mu.Lock()
	p.stats.BlackHoled += n
	p.mu.Unlock()
	return true
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
		p.wg.Add(3)
		mute := new(atomic.Bool) // set by a StallReply: the replies go nowhere
		line := make(chan chunk, lineChunks)
		done := make(chan struct{})
		go p.requests(c, line, done)
		go p.forward(c, up, line, done, cutCh, mute)
		go p.replies(up, c, mute)
	}
}

// lineChunks is how many request chunks a connection's delay line holds: a client that
// streams small writes (a full-duplex pipeline sends one per flush) puts hundreds on a link
// of seconds of latency; a full line would stop reading the client, and the chunks read late
// would be stamped late, adding delay the link does not have.
const lineChunks = 8192

// chunk is one request chunk on its way to Redis, forwarded at due.
type chunk struct {
	b   []byte
	due time.Time
}

// requests reads the client's chunks into the connection's delay line, stamped with when each
// may be forwarded (at once without a latency); it closes the line when the client's side
// ends, and gives up when the forwarder has (done).
func (p *FaultProxy) requests(c net.Conn, line chan<- chunk, done <-chan struct{}) {
	defer p.wg.Done()
	defer close(line)
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 && !p.swallowed(1) {
			ch := chunk{b: append([]byte(nil), buf[:n]...), due: time.Now()}
			if lag := time.Duration(p.latency.Load()); lag > 0 {
				ch.due = ch.due.Add(lag)
				p.mu.Lock()
				p.stats.Lagged++
				p.mu.Unlock()
			}
			select {
			case line <- ch:
			case <-done:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// forward takes the chunks off the delay line in order, each at its due time, decides each
// one's fate and forwards it to Redis; it closes the connection's pair when the line ends (the
// client's side closed and what it had sent has gone on) or a fault ends the connection.
func (p *FaultProxy) forward(c, up net.Conn, line <-chan chunk, done chan<- struct{}, cutCh <-chan struct{}, mute *atomic.Bool) {
	defer p.wg.Done()
	defer close(done)
	defer p.closePair(c, up)
	for ch := range line {
		if !p.hold(time.Until(ch.due), cutCh) {
			return
		}
		if p.swallowed(1) { // a chunk still on its way when the route dropped
			continue
		}
		d := p.decide(ch.b)
		switch d.Kind {
		case Drop:
			return
		case StallReply:
			mute.Store(true)
		case Delay:
			if !p.hold(d.Hold, cutCh) || !d.Late {
				return
			}
		}
		if _, werr := up.Write(ch.b); werr != nil || d.Kind == LoseReply {
			return
		}
	}
}

// hold waits for d; false when the proxy was cut or closed meanwhile.
func (p *FaultProxy) hold(d time.Duration, cutCh <-chan struct{}) bool {
	if d <= 0 {
		select {
		case <-cutCh:
			return false
		case <-p.closed:
			return false
		default:
			return true
		}
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-cutCh:
		return false
	case <-p.closed:
		return false
	}
}

// replies copies Redis's replies back to the client (none once muted by a StallReply, none
// while black-holed).
func (p *FaultProxy) replies(up, c net.Conn, mute *atomic.Bool) {
	defer p.wg.Done()
	defer p.closePair(c, up)
	buf := make([]byte, 64<<10)
	for {
		n, err := up.Read(buf)
		if n > 0 && !mute.Load() && !p.swallowed(1) {
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
