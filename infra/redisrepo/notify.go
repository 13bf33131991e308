package redisrepo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/notify"
)

// rescanEvery is how often Pending also looks at the newest plans (rescanPlans) for notices
// not delivered: the plans whose executor died before it marked them (Notifying is written
// after the plan, in another slot).
const rescanEvery = 10 * time.Second

// rescanPlans is how many of the newest plans a rescan looks at.
const rescanPlans = 500

// Deliveries is the notify.Deliveries on Redis: each plan's delivery states in a hash in its
// slot (rediskey's Notify, with the plan's TTL), the plans that may have some left in a set
// (Notifying). A plan saved with notices is added to the set (saveOnline); a rescan of the
// newest plans adds those whose last notice is not marked delivered.
type Deliveries struct {
	s *Store
	// lastScan is when Pending last rescanned (Unix ns).
	lastScan time.Time
}

var _ notify.Deliveries = (*Deliveries)(nil)

// Deliveries returns the store's notification deliveries. Use one per executor.
func (s *Store) Deliveries() *Deliveries { return &Deliveries{s: s} }

// stateJSON is a delivery's state as stored (s:<key>).
type stateJSON struct {
	Attempts  int       `json:"attempts"`
	Next      time.Time `json:"next,omitzero"`
	Delivered time.Time `json:"delivered,omitzero"`
	Dead      bool      `json:"dead,omitempty"`
	LastError string    `json:"error,omitempty"`
}

// Pending returns up to n plans of the Notifying set, after a rescan when one is due.
func (d *Deliveries) Pending(ctx context.Context, n int) ([]string, error) {
	if time.Since(d.lastScan) >= rescanEvery {
		if err := d.rescan(ctx); err != nil {
			return nil, err
		}
		d.lastScan = time.Now()
	}
	ids, err := d.s.client.SRandMemberN(ctx, d.s.keys.Notifying(), int64(n)).Result()
	return ids, wrap("notifying plans", err)
}

// rescan adds to Notifying the newest plans whose last notice is not marked delivered.
func (d *Deliveries) rescan(ctx context.Context) error {
	ids, err := d.s.client.ZRevRange(ctx, d.s.keys.Plans(), 0, rescanPlans-1).Result()
	if err != nil || len(ids) == 0 {
		return wrap("rescan plans", err)
	}
	notices := make([]*redis.SliceCmd, len(ids))
	done := make([]*redis.StringCmd, len(ids))
	if _, err := d.s.exec(ctx, func(pipe redis.Pipeliner) {
		for i, id := range ids {
			notices[i] = pipe.HMGet(ctx, d.s.keys.Plan(id), "notify", "notices")
			done[i] = pipe.HGet(ctx, d.s.keys.Notify(id), "_done")
		}
	}); err != nil {
		return wrap("rescan plans", err)
	}
	var add []any
	for i, id := range ids {
		v := notices[i].Val()
		dests, _ := v[0].(string)
		list, _ := v[1].(string)
		if dests == "" || list == "" {
			continue
		}
		ns, err := decNotices(list)
		if err != nil || len(ns) == 0 || ns[len(ns)-1].ID == done[i].Val() {
			continue
		}
		add = append(add, id)
	}
	if len(add) == 0 {
		return nil
	}
	return wrap("rescan plans", d.s.client.SAdd(ctx, d.s.keys.Notifying(), add...).Err())
}

// Delivered marks plan planID delivered up to lastNotice and takes it out of Notifying.
func (d *Deliveries) Delivered(ctx context.Context, planID, lastNotice string) error {
	_, err := d.s.exec(ctx, func(pipe redis.Pipeliner) {
		if lastNotice != "" {
			pipe.HSet(ctx, d.s.keys.Notify(planID), "_done", lastNotice)
		}
		pipe.SRem(ctx, d.s.keys.Notifying(), planID)
	})
	return wrap("notifications delivered", err)
}

// States reads every delivery state of plan planID, with the claims that run.
func (d *Deliveries) States(ctx context.Context, planID string) (map[string]plan.Delivery, error) {
	h, err := d.s.client.HGetAll(ctx, d.s.keys.Notify(planID)).Result()
	if err != nil {
		return nil, wrap("notification states", err)
	}
	out := map[string]plan.Delivery{}
	for f, v := range h {
		switch {
		case strings.HasPrefix(f, "s:"):
			st, err := decDelivery(v)
			if err != nil {
				return nil, fmt.Errorf("redisrepo: notification state %s of plan %s: %w", f, planID, err)
			}
			k := f[2:]
			cur := out[k]
			st.Owner, st.Until = cur.Owner, cur.Until
			out[k] = st
		case strings.HasPrefix(f, "c:"):
			k := f[2:]
			st := out[k]
			st.Owner, st.Until = decClaim(v)
			out[k] = st
		}
	}
	return out, nil
}

// Claim runs notify_claim.lua.
func (d *Deliveries) Claim(ctx context.Context, planID string, k string, owner string, now, until time.Time) (plan.Delivery, bool, error) {
	res, err := notifyClaimScript.Run(ctx, d.s.client, []string{d.s.keys.Notify(planID), d.s.keys.Plan(planID)},
		k, owner, now.UnixMilli(), until.UnixMilli(), d.s.ttl.Milliseconds()).Slice()
	if err != nil {
		return plan.Delivery{}, false, wrap("claim notification", err)
	}
	if len(res) != 2 {
		return plan.Delivery{}, false, fmt.Errorf("redisrepo: claim notification: unexpected reply %v", res)
	}
	ok, _ := res[0].(int64)
	raw, _ := res[1].(string)
	st, err := decDelivery(raw)
	if err != nil {
		return plan.Delivery{}, false, fmt.Errorf("redisrepo: claim notification: %w", err)
	}
	return st, ok == 1, nil
}

// Record runs notify_record.lua.
func (d *Deliveries) Record(ctx context.Context, planID string, k string, owner string, st plan.Delivery) error {
	b, err := json.Marshal(stateJSON{Attempts: st.Attempts, Next: st.Next, Delivered: st.Delivered, Dead: st.Dead, LastError: st.LastError})
	if err != nil {
		return fmt.Errorf("redisrepo: notification state: %w", err)
	}
	done := "0"
	if st.Done() {
		done = "1"
	}
	err = notifyRecordScript.Run(ctx, d.s.client, []string{d.s.keys.Notify(planID)}, k, owner, b, done).Err()
	if errors.Is(err, redis.Nil) {
		err = nil
	}
	return wrap("record notification", err)
}

// decDelivery reads a stored state ("": never tried).
func decDelivery(v string) (plan.Delivery, error) {
	if v == "" {
		return plan.Delivery{}, nil
	}
	var j stateJSON
	if err := json.Unmarshal([]byte(v), &j); err != nil {
		return plan.Delivery{}, err
	}
	return plan.Delivery{Attempts: j.Attempts, Next: j.Next, Delivered: j.Delivered, Dead: j.Dead, LastError: j.LastError}, nil
}

// decClaim reads a claim, "<owner>|<until ms>".
func decClaim(v string) (string, time.Time) {
	i := strings.LastIndexByte(v, '|')
	if i < 0 {
		return "", time.Time{}
	}
	var ms int64
	_, _ = fmt.Sscan(v[i+1:], &ms)
	return v[:i], time.UnixMilli(ms)
}
