package server

import (
	"context"

	"github.com/executor-dev/executor/notify"
	"github.com/executor-dev/executor/stagekind"
)

// wireNotifier builds the deliverer of the plans' notifications: it reads the plans from st,
// their digests from the use cases' summary, and sends through the http stage kind (its
// allow-list and SSRF guard apply to every destination).
func (e *Executor) wireNotifier(st stores) *notify.Deliverer {
	sender, _ := e.kinds.Handler(stagekind.KindHTTP)
	var secrets interface{ Secret(string) (string, error) }
	if e.secrets != nil {
		secrets = e.secrets
	}
	return notify.New(notify.Config{Owner: e.cfg.Name, Backoff: e.cfg.NotifyBackoff, Logger: e.cfg.Logger}, notify.Deps{
		Plans: st.plans, Deliveries: st.deliveries, Sender: sender, Secrets: secrets,
		Digest: func(ctx context.Context, planID string) (notify.Digest, error) {
			s, err := e.svc.Summary(ctx, planID)
			return notify.Digest{Plan: s.Plan, Summary: s.Summary}, err
		},
	})
}
