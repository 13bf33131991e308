package eventstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/event"
	"github.com/executor-dev/executor/events"
)

// run reads the stream after last (positioned: last is known) until Stop, handing entries
// to the watches. While Redis fails it is down: every watch on the stream is ended, new ones
// get local events, and it tries again with backoff; once it reads again it positions itself
// at the stream's end (no watch on the stream needs anything older) and ends the local watches,
// whose clients then reconnect to the stream.
func (r *Reader) run(last string, positioned bool) {
	defer close(r.done)
	var conn *redis.Conn
	defer func() {
		if conn != nil {
			r.connID.Store(0)
			_ = conn.Close()
		}
	}()
	backoff := minBackoff
	failing := false
	fail := func(err error) {
		if conn != nil {
			r.connID.Store(0)
			_ = conn.Close()
			conn = nil
		}
		positioned = false
		r.down()
		if !failing {
			failing = true
			r.log.Warn("event stream: redis read failed; watches get this executor's events until it succeeds", "err", err)
		}
		select {
		case <-r.ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
	for r.ctx.Err() == nil {
		if conn == nil {
			node, err := r.nodeOf(r.ctx)
			if err != nil {
				fail(err)
				continue
			}
			conn = node.Conn()
			r.node.Store(node)
			id, err := conn.ClientID(r.ctx).Result()
			if err != nil {
				fail(fmt.Errorf("eventstream: client id: %w", err))
				continue
			}
			r.connID.Store(id)
		}
		if !positioned {
			var err error
			if last, err = r.tail(r.ctx); err != nil {
				fail(err)
				continue
			}
			positioned = true
		}
		if r.ctx.Err() != nil {
			return
		}
		if failing {
			failing = false
			r.log.Info("event stream: redis reads succeed again; watches on this executor's events end, to reconnect to the stream")
		}
		r.upAgain()
		if p, woke := r.park(); woke {
			last, positioned = p.last, p.known
			continue
		} else if r.ctx.Err() != nil {
			return
		}
		res, err := conn.XRead(r.ctx, &redis.XReadArgs{Streams: []string{r.key, last}, Count: readCount, Block: r.block}).Result()
		switch {
		case errors.Is(err, redis.Nil): // nothing new within the block time, or CLIENT UNBLOCK
			continue
		case err != nil:
			if r.ctx.Err() != nil {
				return
			}
			fail(fmt.Errorf("eventstream: xread: %w", err))
			continue
		}
		backoff = minBackoff
		for _, s := range res {
			for _, m := range s.Messages {
				last = m.ID
				for _, e := range r.decode(m) {
					r.fan.Publish(e)
				}
			}
		}
	}
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

// decode returns the events of entry m, each with its entry ID: m.ID for the first,
// "<m.ID>-<index>" for the others; none (logged) when m holds none.
func (r *Reader) decode(m redis.XMessage) []events.Entry {
	if data, ok := m.Values[FieldBatch].(string); ok {
		var es []event.Event
		if err := json.Unmarshal([]byte(data), &es); err != nil {
			r.log.Warn("event stream: entry not decoded, skipped", "id", m.ID, "err", err)
			return nil
		}
		out := make([]events.Entry, len(es))
		for i, e := range es {
			out[i] = events.Entry{ID: m.ID, Event: e}
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
	var e event.Event
	if err := json.Unmarshal([]byte(data), &e); err != nil {
		r.log.Warn("event stream: entry not decoded, skipped", "id", m.ID, "err", err)
		return nil
	}
	return []events.Entry{{ID: m.ID, Event: e}}
}
