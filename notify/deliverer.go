package notify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

// Headers of a notification.
const (
	HeaderEvent     = "X-Executor-Event"         // the event, e.g. ring.halted
	HeaderEventID   = "X-Executor-Event-Id"      // "<planId>/<noticeId>": drop a duplicate by it
	HeaderSignature = "X-Executor-Signature-256" // "sha256=<hex HMAC-SHA256 of the body>", with a secret
	HeaderAttempt   = "X-Executor-Delivery-Attempt"
)

// Defaults of Config.
const (
	DefaultPoll        = time.Second
	DefaultBackoff     = time.Second
	DefaultMaxBackoff  = 5 * time.Minute
	DefaultMaxAttempts = 20
	DefaultTimeout     = 10 * time.Second
	pendingPerPoll     = 100
)

// Config tunes a Deliverer. Zero fields take the defaults.
type Config struct {
	Owner       string        // this executor's name, on its claims
	Poll        time.Duration // how often pending plans are looked at
	Backoff     time.Duration // the wait after a first failed attempt, doubled after each
	MaxBackoff  time.Duration
	MaxAttempts int           // attempts before a delivery is given up
	Timeout     time.Duration // of one attempt (its claim lasts two)
	Logger      *slog.Logger
	Clock       func() time.Time
}

// Deps are what a Deliverer reads and sends through.
type Deps struct {
	Plans interface {
		Plan(ctx context.Context, id string) (*plan.Plan, error)
	}
	Deliveries Deliveries
	// Digest reads what a notification says of its plan (its tasks counted by status).
	Digest func(ctx context.Context, planID string) (Digest, error)
	// Sender sends a notification: the http stage kind (its allow-list and SSRF guard apply).
	Sender stage.Handler
	// Secrets resolves a destination's signing secret; nil: none can be resolved.
	Secrets interface {
		Secret(name string) (string, error)
	}
}

// Deliverer sends the notices of plans to their destinations (package doc).
type Deliverer struct {
	cfg  Config
	deps Deps

	mu   sync.Mutex
	stop context.CancelFunc
	done chan struct{}

	// later is, per pending plan, when it is worth reading again: its soonest retry, at most
	// lookAgain ahead (a plan is read whole: a retry 5 minutes off costs no read a second).
	later map[string]time.Time
}

// lookAgain bounds how long a pending plan goes unread (new notices of it wait at most this).
const lookAgain = 5 * time.Second

// New returns a Deliverer; Start runs it.
func New(cfg Config, deps Deps) *Deliverer {
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.Poll <= 0 {
		cfg.Poll = min(DefaultPoll, cfg.Backoff) // a retry is not later than its backoff says
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	return &Deliverer{cfg: cfg, deps: deps, later: map[string]time.Time{}}
}

// Start runs the delivery loop until Stop.
func (d *Deliverer) Start(context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stop != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.stop, d.done = cancel, make(chan struct{})
	go d.loop(ctx)
	return nil
}

// Stop ends the loop and waits for it (or for ctx).
func (d *Deliverer) Stop(ctx context.Context) error {
	d.mu.Lock()
	stop, done := d.stop, d.done
	d.mu.Unlock()
	if stop == nil {
		return nil
	}
	stop()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *Deliverer) loop(ctx context.Context) {
	defer close(d.done)
	t := time.NewTicker(d.cfg.Poll)
	defer t.Stop()
	for {
		d.Poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Poll delivers what is due of the pending plans, once. Not for concurrent use on one
// Deliverer (its loop calls it; so may a test, without Start).
func (d *Deliverer) Poll(ctx context.Context) {
	ids, err := d.deps.Deliveries.Pending(ctx, pendingPerPoll)
	if err != nil {
		d.cfg.Logger.Debug("notifications: pending plans not read", "err", err)
		return
	}
	now := d.cfg.Clock()
	for id, at := range d.later { // only Poll's goroutine touches later
		if !at.After(now) {
			delete(d.later, id)
		}
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			return
		}
		if _, wait := d.later[id]; wait {
			continue
		}
		if err := d.plan(ctx, id); err != nil {
			d.cfg.Logger.Debug("notifications: plan not looked at", "plan_id", id, "err", err)
		}
	}
}

// plan delivers what is due of plan id's notices, and tells Deliveries when nothing is left.
func (d *Deliverer) plan(ctx context.Context, id string) error {
	p, err := d.deps.Plans.Plan(ctx, id)
	if errors.Is(err, plan.ErrNotFound) {
		return d.deps.Deliveries.Delivered(ctx, id, "")
	}
	if err != nil {
		return err
	}
	states, err := d.deps.Deliveries.States(ctx, id)
	if err != nil {
		return err
	}
	left, last := false, ""
	now := d.cfg.Clock()
	soonest := now.Add(lookAgain)
	for _, n := range p.Notices() {
		last = n.ID
		for i, dest := range p.Notify() {
			k := plan.DeliveryKey(n.ID, i)
			if !dest.Wants(n.Event) || states[k].Done() {
				continue
			}
			left = true
			if !d.canSign(dest) { // left to an executor that can read its secret
				continue
			}
			if st := states[k]; st.Next.After(now) || (st.Owner != "" && st.Until.After(now)) {
				soonest = earliest(soonest, st.Next, st.Until)
				continue
			}
			soonest = now // sent now: look again at the next poll
			if err := d.deliver(ctx, p, n, i, k); err != nil {
				return err
			}
		}
	}
	if !left {
		return d.deps.Deliveries.Delivered(ctx, id, last)
	}
	if soonest.After(now) {
		d.later[id] = soonest
	}
	return nil
}

// earliest is the earliest of t and the non-zero times of more.
func earliest(t time.Time, more ...time.Time) time.Time {
	for _, m := range more {
		if !m.IsZero() && m.Before(t) {
			t = m
		}
	}
	return t
}

// deliver claims delivery k (notice n to destination i of p), sends it and records how it went.
func (d *Deliverer) deliver(ctx context.Context, p *plan.Plan, n plan.Notice, i int, k string) error {
	now := d.cfg.Clock()
	st, mine, err := d.deps.Deliveries.Claim(ctx, p.ID(), k, d.cfg.Owner, now, now.Add(2*d.cfg.Timeout))
	if err != nil || !mine {
		return err
	}
	st.Attempts++
	sendErr := d.send(ctx, p, n, p.Notify()[i], st.Attempts)
	st.Owner, st.Until = "", time.Time{}
	switch {
	case sendErr == nil:
		st.Delivered, st.LastError = d.cfg.Clock(), ""
	default:
		var se *stage.Error
		permanent := errors.As(sendErr, &se) && se.Class == stage.ClassPermanent && se.Code == 0
		sendErr = errors.New(p.Notify()[i].Redact(sendErr.Error())) // a webhook's path is its secret
		st.LastError = sendErr.Error()
		if st.Attempts >= d.cfg.MaxAttempts || permanent {
			st.Dead = true
		} else {
			st.Next = d.cfg.Clock().Add(d.backoff(st.Attempts))
		}
		d.cfg.Logger.Warn("notification not delivered", "plan_id", p.ID(), "event", n.Event, "event_id", eventID(p.ID(), n),
			"destination", i, "attempt", st.Attempts, "gave_up", st.Dead, "err", sendErr)
	}
	return d.deps.Deliveries.Record(ctx, p.ID(), k, d.cfg.Owner, st)
}

// backoff is the wait after the attempts-th failed attempt: Backoff doubled, at most MaxBackoff.
func (d *Deliverer) backoff(attempts int) time.Duration {
	b := d.cfg.Backoff
	for range attempts - 1 {
		if b >= d.cfg.MaxBackoff/2 {
			return d.cfg.MaxBackoff
		}
		b *= 2
	}
	return min(b, d.cfg.MaxBackoff)
}

// send makes one attempt of notice n to dest: a POST through the http stage kind.
func (d *Deliverer) send(ctx context.Context, p *plan.Plan, n plan.Notice, dest plan.Destination, attempt int) error {
	dg, err := d.deps.Digest(ctx, p.ID())
	if err != nil {
		return fmt.Errorf("notify: digest of plan %s: %w", p.ID(), err)
	}
	b, err := body(message(dg, n), dest.Format)
	if err != nil {
		return fmt.Errorf("notify: body: %w", err)
	}
	headers := map[string]any{"Content-Type": "application/json", HeaderEvent: n.Event,
		HeaderEventID: eventID(p.ID(), n), HeaderAttempt: strconv.Itoa(attempt)}
	if dest.Secret != "" {
		if d.deps.Secrets == nil {
			return fmt.Errorf("notify: secret %q: no secrets are configured (serve --secrets-dir)", dest.Secret)
		}
		secret, err := d.deps.Secrets.Secret(dest.Secret)
		if err != nil {
			return fmt.Errorf("notify: secret %q: %w", dest.Secret, err)
		}
		headers[HeaderSignature] = Sign([]byte(secret), b)
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	_, err = d.deps.Sender.Run(ctx, stage.Request{
		PlanID: p.ID(), TaskID: n.ID, Stage: "notify", Attempt: attempt, Run: 1,
		Params: map[string]any{"url": dest.URL, "method": "POST", "headers": headers, "body": string(b)},
	})
	return err
}

// canSign reports whether this executor can sign for dest: it has no secret, or this
// executor can read it. One that cannot leaves the delivery to the others (they all should
// have the same --secrets-dir).
func (d *Deliverer) canSign(dest plan.Destination) bool {
	if dest.Secret == "" {
		return true
	}
	if d.deps.Secrets == nil {
		return false
	}
	_, err := d.deps.Secrets.Secret(dest.Secret)
	return err == nil
}

// Sign is the X-Executor-Signature-256 of body with secret: "sha256=" and the hex HMAC-SHA256.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}
