package batch

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// gatherMax is how many commands a gathered batch holds at most: a full one is sent at once.
const gatherMax = 256

// gatherer collects the commands of many goroutines for up to its window (Options.Gather) and
// sends them as one pipeline: on the full-duplex pipeline, one contiguous batch, written at
// once. A batch that waits for its replies does not hold up the next one: each is executed on
// a goroutine of its own (the first command's timer, or the one that filled it). A caller
// that gives up waiting (its timeout) leaves its command in the batch, as Submit does: it may
// still reach Redis.
type gatherer struct {
	ap     *redis.AutoPipeliner
	window time.Duration
	mu     sync.Mutex
	cur    *gathered // the batch commands join; nil when none is open
}

// gathered is one batch: done is closed once every command in it has its reply (or its error).
type gathered struct {
	cmds []redis.Cmder
	done chan struct{}
}

// add puts cmd in the open batch (opening one, sent within the window) and returns it.
func (g *gatherer) add(cmd redis.Cmder) *gathered {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.cur
	if b == nil {
		b = &gathered{cmds: make([]redis.Cmder, 0, 16), done: make(chan struct{})}
		g.cur = b
		time.AfterFunc(g.window, func() { g.send(b) })
	}
	b.cmds = append(b.cmds, cmd)
	if len(b.cmds) >= gatherMax {
		g.cur = nil
		go g.exec(b)
	}
	return b
}

// flush sends the open batch, if any, now, and waits for its replies.
func (g *gatherer) flush() {
	g.mu.Lock()
	b := g.cur
	g.mu.Unlock()
	if b != nil {
		g.send(b)
	}
}

// send sends b unless it was sent already (full, or flushed).
func (g *gatherer) send(b *gathered) {
	g.mu.Lock()
	if g.cur != b {
		g.mu.Unlock()
		return
	}
	g.cur = nil
	g.mu.Unlock()
	g.exec(b)
}

// exec runs b's commands as one pipeline; each command carries its own reply or error (the
// pipeline's own error is its first command's). The wait is bounded by the client's read
// timeout, not by the callers' contexts: they are many, and each bounds its own wait.
func (g *gatherer) exec(b *gathered) {
	defer close(b.done)
	pipe := g.ap.Pipeline()
	ctx := context.Background()
	for _, c := range b.cmds {
		_ = pipe.Process(ctx, c)
	}
	_, _ = pipe.Exec(ctx)
}
