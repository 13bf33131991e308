package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/executor-dev/executor/domain/stage"
)

// withApprovers gives each gate of stages its effective approvers rule: its own, else the
// plan's rule; each rule with the plan's submitter (what notSubmitter compares with). The
// tasks carry their stages' rules, so a decision is judged with the task's own write.
func (s *Service) withApprovers(stages []stage.Spec, planRule *stage.Approvers, submitter string) []stage.Spec {
	out := make([]stage.Spec, len(stages))
	for i, sp := range stages {
		if sp.Approvers == nil && planRule != nil && s.isGate(sp.Kind) {
			sp.Approvers = planRule
		}
		sp.Approvers = submittedRule(sp.Approvers, submitter)
		out[i] = sp
	}
	return out
}

// submittedRule is a copy of rule (nil: nil) naming the plan's submitter.
func submittedRule(rule *stage.Approvers, submitter string) *stage.Approvers {
	if rule == nil {
		return nil
	}
	c := *rule
	c.Submitter = submitter
	return &c
}

// isGate reports whether kind parks its task for an operator's decision (stage.Gate).
func (s *Service) isGate(kind string) bool {
	h, ok := s.kinds.Handler(kind)
	if !ok {
		return false
	}
	_, gate := h.(stage.Gate)
	return gate
}

// checkRoles reports a rule's role that may not decide (Deps.DecidingRoles): a gate only such
// a role could pass would wait for ever.
func (s *Service) checkRoles(field string, rule *stage.Approvers, add func(field, reason string)) {
	if rule == nil || s.decidingRoles == nil {
		return
	}
	for i, r := range rule.Roles {
		if !slices.Contains(s.decidingRoles, r) {
			add(fmt.Sprintf("%s.roles[%d]", field, i), fmt.Sprintf("%q may not decide: a decision needs a token of role %s",
				r, strings.Join(s.decidingRoles, " or ")))
		}
	}
}
