package signals_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/infra/signals"
)

// inbox collects what a bus received.
type inbox struct {
	mu   sync.Mutex
	msgs []string
}

func (b *inbox) receive(msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.msgs = append(b.msgs, msg)
}

func (b *inbox) got() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.msgs...)
}

func TestEverySignalReachesEveryExecutorOfItsPrefix(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	before := redistest.SettledGoroutines(t)
	newBus := func(prefix string) (*signals.Redis, *inbox) {
		client := redis.NewClient(&redis.Options{Addr: srv.Addr()})
		t.Cleanup(func() { _ = client.Close() })
		bus := signals.New(client, signals.Options{Keys: rediskey.New(prefix)})
		in := &inbox{}
		bus.SetReceive(in.receive)
		require.NoError(t, bus.Start(ctx))
		return bus, in
	}
	a, inA := newBus("")
	b, inB := newBus("")
	other, inOther := newBus("other:")

	require.NoError(t, a.Send(ctx, "cancel T1"))
	require.NoError(t, b.Send(ctx, "plan P1"))
	for name, in := range map[string]*inbox{"sender": inA, "other executor": inB} {
		require.Eventually(t, func() bool { return len(in.got()) == 2 }, 5*time.Second, 10*time.Millisecond, name)
		assert.ElementsMatch(t, []string{"cancel T1", "plan P1"}, in.got(), name)
	}
	assert.Empty(t, inOther.got(), "another prefix is another cluster")

	for _, bus := range []*signals.Redis{a, b, other} {
		require.NoError(t, bus.Stop(ctx))
		require.NoError(t, bus.Stop(ctx), "a second Stop does nothing")
	}
	require.Error(t, a.Start(ctx), "a stopped bus is not started again")
	redistest.RequireGoroutinesBackTo(t, before)
}

func TestSendToARedisThatIsGoneIsAnError(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = client.Close() })
	bus := signals.New(client, signals.Options{})
	srv.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	require.Error(t, bus.Send(ctx, "cancel T1"))
}
