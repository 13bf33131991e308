package app

import (
	"context"

	"github.com/executor-dev/executor/domain/plan"
)

// DeliveryStates reads where the deliveries of a plan's notices stand (the executors'
// notify.Deliveries).
type DeliveryStates interface {
	States(ctx context.Context, planID string) (map[string]plan.Delivery, error)
}

// NoticeView is one notice of a plan with its delivery to each destination that wants it.
type NoticeView struct {
	plan.Notice
	Deliveries []DeliveryView
}

// DeliveryView is the delivery of a notice to destination Dest (its index in the plan's
// notify list).
type DeliveryView struct {
	Dest int
	plan.Delivery
}

// Notifications returns plan planID's notices, oldest first, with their deliveries.
func (s *Service) Notifications(ctx context.Context, planID string) (*plan.Plan, []NoticeView, error) {
	if err := checkULID("planId", planID); err != nil {
		return nil, nil, err
	}
	if err := s.refuseRead(); err != nil {
		return nil, nil, err
	}
	p, err := s.plans.Plan(ctx, planID)
	if err != nil {
		return nil, nil, err
	}
	states := map[string]plan.Delivery{}
	if s.deliveries != nil && len(p.Notify()) > 0 {
		if states, err = s.deliveries.States(ctx, planID); err != nil {
			return nil, nil, err
		}
	}
	var out []NoticeView
	for _, n := range p.Notices() {
		v := NoticeView{Notice: n}
		for i, d := range p.Notify() {
			if d.Wants(n.Event) {
				v.Deliveries = append(v.Deliveries, DeliveryView{Dest: i, Delivery: states[plan.DeliveryKey(n.ID, i)]})
			}
		}
		out = append(out, v)
	}
	return p, out, nil
}
