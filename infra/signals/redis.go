package signals

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/infra/rediskey"
)

// subscribeWait is how long Start waits for the subscription's confirmation.
const subscribeWait = 2 * time.Second

// Options configures a Redis bus. Zero fields take defaults.
type Options struct {
	Keys   rediskey.Keys // default rediskey.New("")
	Logger *slog.Logger  // default slog.Default()
}

// Redis is the signal bus on Redis pub/sub.
type Redis struct {
	client  redis.UniversalClient
	channel string
	log     *slog.Logger

	mu      sync.Mutex
	receive func(msg string) // set by SetReceive, run by Start's reader
	ps      *redis.PubSub
	cancel  context.CancelFunc
	done    chan struct{}
	stopped bool
}

// New returns a bus on client's Redis. SetReceive, then Start it to receive.
func New(client redis.UniversalClient, opts Options) *Redis {
	if opts.Keys == (rediskey.Keys{}) {
		opts.Keys = rediskey.New("")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Redis{client: client, channel: opts.Keys.Signals(), log: opts.Logger}
}

// Send publishes msg to every executor on the channel.
func (r *Redis) Send(ctx context.Context, msg string) error {
	if err := r.client.Publish(ctx, r.channel, msg).Err(); err != nil {
		return fmt.Errorf("signals: publish: %w", err)
	}
	return nil
}

// SetReceive sets the callback every message is handed to; call it before Start. It is not
// an argument of New: what it hands the messages to (the orchestrator) takes the bus as its
// own, so it is built after it.
func (r *Redis) SetReceive(receive func(msg string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.receive = receive
}

// Start subscribes to the channel and hands every message to the callback of SetReceive, in
// a goroutine of its own, until Stop. It returns once the subscription is confirmed or, when
// Redis does not answer, after about 2 s or when ctx ends (go-redis keeps trying in the
// background). A second Start is an error, and so is a Start before SetReceive.
func (r *Redis) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done != nil {
		return errors.New("signals: started already")
	}
	if r.receive == nil {
		return errors.New("signals: start: no receive callback (SetReceive)")
	}
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel, r.done = cancel, make(chan struct{})
	subCtx, subCancel := context.WithTimeout(ctx, subscribeWait)
	defer subCancel()
	r.ps = r.client.Subscribe(subCtx, r.channel)
	ch := r.ps.ChannelWithSubscriptions(redis.WithChannelSize(256))
	select {
	case <-ch: // the confirmation
	case <-subCtx.Done():
		r.log.Warn("signals: channel not subscribed yet (Redis unavailable?); retrying in the background", "channel", r.channel)
	}
	go r.loop(loopCtx, ch, r.receive)
	return nil
}

func (r *Redis) loop(ctx context.Context, ch <-chan any, receive func(string)) {
	defer close(r.done)
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			if msg, ok := m.(*redis.Message); ok {
				receive(msg.Payload)
			}
		}
	}
}

// Stop ends the subscription and waits for the reader (or ctx). Stopping a bus that was not
// started, or again, does nothing.
func (r *Redis) Stop(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done == nil || r.stopped {
		return nil
	}
	r.stopped = true
	r.cancel()
	err := r.ps.Close() // closes the message channel: the loop ends
	select {
	case <-r.done:
	case <-ctx.Done():
		return fmt.Errorf("signals: stop: %w", ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("signals: close subscription: %w", err)
	}
	return nil
}
