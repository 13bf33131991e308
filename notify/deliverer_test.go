package notify_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/notify"
	"github.com/executor-dev/executor/stagekind"
)

const secret = "s3cret-for-hmac"

// receiver is a webhook receiver that refuses its first fail calls (500), checks every
// signature and counts what it accepted by event id.
type receiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	fail int
	seen int
	bad  int
	got  map[string]int // event id → accepted calls
}

func newReceiver(t *testing.T, fail int) *receiver {
	t.Helper()
	r := &receiver{fail: fail, got: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.seen++
		if req.Header.Get(notify.HeaderSignature) != notify.Sign([]byte(secret), body) {
			r.bad++
		}
		if r.seen <= r.fail {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		r.got[req.Header.Get(notify.HeaderEventID)]++
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) accepted() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.got {
		out[k] = v
	}
	return out
}

type secrets struct{}

func (secrets) Secret(name string) (string, error) {
	if name != "hook" {
		return "", fmt.Errorf("no secret %q", name)
	}
	return secret, nil
}

// store is one implementation's plans and deliveries.
type store struct {
	plans      plan.Repository
	create     func(p *plan.Plan, tasks []*task.Task) error
	deliveries func() notify.Deliveries // one per executor
}

func stores(t *testing.T) map[string]store {
	t.Helper()
	db := memrepo.New()
	srv := redistest.Start(t)
	rs := redisrepo.New(srv.Client(), redisrepo.Options{Keys: rediskey.New("n:")})
	return map[string]store{
		"memory": {plans: db.Plans(), create: func(p *plan.Plan, ts []*task.Task) error { return db.CreatePlan(context.Background(), p, ts) },
			deliveries: func() notify.Deliveries { return db.Deliveries() }},
		"redis": {plans: rs.Plans(), create: func(p *plan.Plan, ts []*task.Task) error { return rs.CreatePlan(context.Background(), p, ts) },
			deliveries: func() notify.Deliveries {
				return redisrepo.New(srv.Client(), redisrepo.Options{Keys: rediskey.New("n:")}).Deliveries()
			}},
	}
}

// endedPlan stores a plan that notifies url of its end, and ends it FAILED.
func endedPlan(t *testing.T, s store, url string) *plan.Plan {
	t.Helper()
	now := time.Now().UTC()
	specs := []stage.Spec{{Name: "a", Kind: "noop"}}
	id := ulid.Make().String()
	tk, err := task.New(id, "t-"+id[20:], nil, specs, now)
	require.NoError(t, err)
	p, err := plan.New(plan.Draft{ID: id, Name: "notified", Stages: specs, TaskIDs: []string{tk.ID()},
		Notify: []plan.Destination{{URL: url, On: []string{plan.EventPlanEnded}, Secret: "hook"}}}, now)
	require.NoError(t, err)
	require.NoError(t, s.create(p, []*task.Task{tk}))
	_, err = s.plans.Update(context.Background(), id, func(p *plan.Plan) error {
		if err := p.Start(now); err != nil {
			return err
		}
		return p.Fail(now)
	})
	require.NoError(t, err)
	return p
}

// A notice is delivered once (after de-duplication by its event id) to a receiver that
// fails five times first, signed, whichever of two executors polls; then nothing is left.
func TestANoticeIsDeliveredOnceThroughFailures(t *testing.T) {
	t.Parallel()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rcv := newReceiver(t, 5)
			p := endedPlan(t, s, rcv.srv.URL+"/hook")
			deps := func() notify.Deps {
				return notify.Deps{Plans: s.plans, Deliveries: s.deliveries(), Sender: stagekind.NewHTTP(stagekind.HTTPOptions{}), Secrets: secrets{},
					Digest: func(ctx context.Context, planID string) (notify.Digest, error) {
						got, err := s.plans.Plan(ctx, planID)
						return notify.Digest{Plan: got, Summary: task.NewSummary()}, err
					}}
			}
			a := notify.New(notify.Config{Owner: "a", Backoff: time.Millisecond}, deps())
			b := notify.New(notify.Config{Owner: "b", Backoff: time.Millisecond}, deps())
			want := map[string]int{p.ID() + "/1-" + plan.EventPlanEnded: 1}
			require.Eventually(t, func() bool {
				var wg sync.WaitGroup
				for _, d := range []*notify.Deliverer{a, b} {
					wg.Go(func() { d.Poll(context.Background()) })
				}
				wg.Wait()
				return len(rcv.accepted()) == 1
			}, 10*time.Second, 5*time.Millisecond)
			for range 5 { // more polls send nothing more
				a.Poll(context.Background())
				b.Poll(context.Background())
			}
			assert.Equal(t, want, rcv.accepted())
			rcv.mu.Lock()
			assert.Equal(t, 6, rcv.seen, "five refusals, then the delivery")
			assert.Zero(t, rcv.bad, "every call signed with the secret")
			rcv.mu.Unlock()
			states, err := deps().Deliveries.States(context.Background(), p.ID())
			require.NoError(t, err)
			st := states[plan.DeliveryKey("1-"+plan.EventPlanEnded, 0)]
			assert.Equal(t, 6, st.Attempts)
			assert.False(t, st.Delivered.IsZero())
			pending, err := deps().Deliveries.Pending(context.Background(), 100)
			require.NoError(t, err)
			assert.NotContains(t, pending, p.ID(), "nothing left to deliver")
		})
	}
}
