package eventstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/events"
)

// run reads the stream after last (positioned: last is known) until Stop, handing entries
// to the watches. While Redis fails it is down: every watch on the stream is ended, new ones
// get local events, and it tries again with backoff; once it reads again it positions itself
// at the stream's end (no watch on the stream needs anything older) and ends the local watches,
// whose clients then reconnect to the stream.
func (r *Reader) run(last string, positioned bool) {
	defer close(r.done)
	l := &readLoop{r: r, last: last, positioned: positioned, backoff: minBackoff}
	defer l.closeConn()
	for r.ctx.Err() == nil {
		if err := l.ready(); err != nil {
			l.fail(err)
			continue
		}
		if r.ctx.Err() != nil {
			return
		}
		l.succeeded()
		if p, woke := r.park(); woke {
			l.last, l.positioned = p.last, p.known
			continue
		} else if r.ctx.Err() != nil {
			return
		}
		if err := l.read(); err != nil {
			if r.ctx.Err() != nil {
				return
			}
			l.fail(err)
		}
	}
}

// readLoop is what run keeps between its reads: the connection it blocks on, where it reads
// from, and how it is failing.
type readLoop struct {
	r          *Reader
	conn       *redis.Conn
	last       string // the id read after
	positioned bool   // last is known (else the loop positions itself at the stream's end)
	backoff    time.Duration
	failing    bool // the last attempt failed (logged once per outage)
}

// closeConn closes the loop's connection, if any.
func (l *readLoop) closeConn() {
	if l.conn != nil {
		l.r.connID.Store(0)
		_ = l.conn.Close()
		l.conn = nil
	}
}

// fail drops the connection and the position, tells the watches that Redis is away (they get
// this executor's events meanwhile), and waits for the backoff, which doubles.
func (l *readLoop) fail(err error) {
	l.closeConn()
	l.positioned = false
	l.r.down()
	if !l.failing {
		l.failing = true
		l.r.log.Warn("event stream: redis read failed; watches get this executor's events until it succeeds", "err", err)
	}
	select {
	case <-l.r.ctx.Done():
	case <-time.After(l.backoff):
	}
	l.backoff = min(2*l.backoff, maxBackoff)
}

// ready connects to the stream's node, and positions the loop at the stream's end unless it
// knows where to read from.
func (l *readLoop) ready() error {
	if l.conn == nil {
		node, err := l.r.nodeOf(l.r.ctx)
		if err != nil {
			return err
		}
		l.conn = node.Conn()
		l.r.node.Store(node)
		id, err := l.conn.ClientID(l.r.ctx).Result()
		if err != nil {
			return fmt.Errorf("eventstream: client id: %w", err)
		}
		l.r.connID.Store(id)
	}
	if !l.positioned {
		last, err := l.r.tail(l.r.ctx)
		if err != nil {
			return err
		}
		l.last, l.positioned = last, true
	}
	return nil
}

// succeeded ends a failing spell (the watches on this executor's own events end, to reconnect
// to the stream).
func (l *readLoop) succeeded() {
	if l.failing {
		l.failing = false
		l.r.log.Info("event stream: redis reads succeed again; watches on this executor's events end, to reconnect to the stream")
	}
	l.r.upAgain()
}

// read blocks on the stream for the entries after last and publishes their events.
func (l *readLoop) read() error {
	r := l.r
	res, err := l.conn.XRead(r.ctx, &redis.XReadArgs{Streams: []string{r.key, l.last}, Count: readCount, Block: r.block}).Result()
	switch {
	case errors.Is(err, redis.Nil): // nothing new within the block time, or CLIENT UNBLOCK
		return nil
	case err != nil:
		return fmt.Errorf("eventstream: xread: %w", err)
	}
	l.backoff = minBackoff
	for _, s := range res {
		for _, m := range s.Messages {
			l.last = m.ID
			for _, e := range r.decode(m) {
				r.fan.Publish(e)
			}
		}
	}
	return nil
}

// position is where a woken goroutine reads from: after last when known, else it positions
// itself at the stream's end.
type position struct {
	last  string
	known bool
}

// park waits, while no watch is on the stream, until a watch wakes the goroutine (true, with
// where to read from) or Stop; false at once when a watch is on the stream.
func (r *Reader) park() (position, bool) {
	r.mu.Lock()
	if r.fan.Subscribers() > 0 || r.stopped {
		r.mu.Unlock()
		return position{}, false
	}
	r.parked = true
	r.mu.Unlock()
	select {
	case p := <-r.wake:
		return p, true
	case <-r.ctx.Done():
		return position{}, false
	}
}

// down ends every watch on the stream: new ones get local events until upAgain.
func (r *Reader) down() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.up = false
	r.fan.CloseAll()
}

// upAgain sends new watches to the stream, and ends those on local events.
func (r *Reader) upAgain() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.up || r.stopped {
		return
	}
	r.up = true
	r.closeFallbacks()
}

// nodeOf returns the client of the node that holds the stream: the client itself on one node
// (or the master Sentinel names), the stream's master on a Redis Cluster (asked again after
// every failure: a failover moves it). A blocking read needs a connection of its own, and its
// CLIENT UNBLOCK the same node.
func (r *Reader) nodeOf(ctx context.Context) (*redis.Client, error) {
	switch c := r.client.(type) {
	case *redis.Client:
		return c, nil
	case *redis.ClusterClient:
		node, err := c.MasterForKey(ctx, r.key)
		if err != nil {
			return nil, fmt.Errorf("eventstream: master of %s: %w", r.key, err)
		}
		return node, nil
	default:
		return nil, fmt.Errorf("eventstream: a blocking read needs a *redis.Client or a *redis.ClusterClient, not %T", r.client)
	}
}

// tail returns the ID of the stream's last entry ("0-0" when it is empty or missing).
func (r *Reader) tail(ctx context.Context) (string, error) {
	msgs, err := r.client.XRevRangeN(ctx, r.key, "+", "-", 1).Result()
	if err != nil {
		return "", fmt.Errorf("eventstream: xrevrange: %w", err)
	}
	if len(msgs) == 0 {
		return "0-0", nil
	}
	return msgs[0].ID, nil
}

// decode returns the events of entry m (records), each with its entry ID: m.ID for the first,
// "<m.ID>-<index>" for the others; none (logged) when m holds none.
func (r *Reader) decode(m redis.XMessage) []events.Entry {
	if data, ok := m.Values[FieldBatch].(string); ok {
		var rs []record
		if err := json.Unmarshal([]byte(data), &rs); err != nil {
			r.log.Warn("event stream: entry not decoded, skipped", "id", m.ID, "err", err)
			return nil
		}
		out := make([]events.Entry, len(rs))
		for i := range rs {
			out[i] = events.Entry{ID: m.ID, Event: rs[i].event()}
			if i > 0 {
				out[i].ID = m.ID + "-" + strconv.Itoa(i)
			}
		}
		return out
	}
	data, ok := m.Values[Field].(string)
	if !ok {
		r.log.Warn("event stream: entry without an event skipped", "id", m.ID)
		return nil
	}
	var rec record
	if err := json.Unmarshal([]byte(data), &rec); err != nil {
		r.log.Warn("event stream: entry not decoded, skipped", "id", m.ID, "err", err)
		return nil
	}
	return []events.Entry{{ID: m.ID, Event: rec.event()}}
}
