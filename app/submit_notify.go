package app

import (
	"errors"
	"fmt"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

// checkNotify reports through add what is wrong with a submission's notification
// destinations: their shape (plan.Destination.Validate), a URL the http kind refuses (its
// scheme, the outbound allow-list, as for a stage's url), a signing secret this executor
// cannot resolve.
func (s *Service) checkNotify(dests []plan.Destination, add func(field, reason string)) {
	if len(dests) > plan.MaxDestinations {
		add("notify", fmt.Sprintf("at most %d destinations", plan.MaxDestinations))
		return
	}
	var check stage.ParamValidator
	if h, ok := s.kinds.Handler("http"); ok {
		check, _ = h.(stage.ParamValidator)
	}
	for i, d := range dests {
		var fe *stage.FieldError
		if errors.As(d.Validate(i), &fe) {
			add(fe.Field, fe.Reason)
			continue
		}
		if check != nil {
			if err := check.ValidateParams(map[string]any{"url": d.URL, "method": "POST"}); err != nil {
				add(fmt.Sprintf("notify[%d].url", i), err.Error())
			}
		}
		if d.Secret != "" {
			if _, err := s.secretValue(d.Secret); err != nil {
				add(fmt.Sprintf("notify[%d].secret", i), fmt.Sprintf("this executor cannot read a secret named %q: put its file in --secrets-dir, on every executor", d.Secret))
			}
		}
	}
}
