package api

import (
	"fmt"
	"time"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/wire"
)

// submitRequest converts a decoded submission to the use case's request. Durations are Go
// duration strings; every one that does not parse is added to the request's Violations, named
// by its path ("stages[1].retry.maxBackoff"), for app.Service.Submit to report with every
// other violation (it validates everything else). It returns no error today; the error is
// kept for conversions that cannot go on.
func submitRequest(req wire.PlanRequest) (app.SubmitRequest, error) {
	out := app.SubmitRequest{
		Name: req.Name, Labels: req.Labels, MaxConcurrency: req.MaxConcurrency,
		StartRate: req.StartRate, Stages: make([]stage.Spec, len(req.Stages)), OnFailure: plan.OnFailure(req.OnFailure),
		Tenants: make([]app.TenantInput, len(req.Tenants)), Approvers: approversOf(req.Approvers),
		Notify: destinationsOf(req.Notify),
	}
	if req.StartAt != nil {
		out.StartAt = *req.StartAt
	}
	if c := req.Canary; c != nil {
		out.Canary = plan.Canary{Tenants: c.Tenants, Then: plan.Then(c.Then)}
	}
	var bad []app.FieldViolation
	duration := func(field, s string) time.Duration {
		if s == "" {
			return 0
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			bad = append(bad, app.FieldViolation{
				Field: field, Reason: fmt.Sprintf("%q is not a duration such as \"10s\" or \"200ms\"", s),
			})
		}
		return d
	}
	for i, s := range req.Stages {
		out.Stages[i] = stageSpec(s, fmt.Sprintf("stages[%d]", i), duration)
	}
	for i, t := range req.Tenants {
		out.Tenants[i] = app.TenantInput{ID: t.ID, Params: t.Params, Wave: t.Wave}
	}
	out.FailureBudget, out.Rollout.FailureBudget = budgetOf(req, func(field, reason string) {
		bad = append(bad, app.FieldViolation{Field: field, Reason: reason})
	})
	out.Rollout = rolloutOf(req, out.Rollout, duration, func(field, reason string) {
		bad = append(bad, app.FieldViolation{Field: field, Reason: reason})
	})
	out.Violations = bad
	return out, nil
}

// stageSpec converts a stage (or a wave's health check) named field.
func stageSpec(s wire.StageRequest, field string, duration func(field, s string) time.Duration) stage.Spec {
	spec := stage.Spec{Name: s.Name, Kind: s.Kind, Params: s.Params, Timeout: duration(field+".timeout", s.Timeout)}
	if r := s.Retry; r != nil {
		spec.Retry = stage.Policy{
			MaxAttempts:    r.MaxAttempts,
			InitialBackoff: duration(field+".retry.initialBackoff", r.InitialBackoff),
			MaxBackoff:     duration(field+".retry.maxBackoff", r.MaxBackoff),
			Multiplier:     r.Multiplier,
			Jitter:         stage.Jitter(r.Jitter),
		}
	}
	if u := s.Undo; u != nil {
		undo := stageSpec(*u, field+".undo", duration)
		spec.Undo = &undo
	}
	spec.Approvers = approversOf(s.Approvers)
	return spec
}

// approversOf converts an approvers rule (nil: nil).
func approversOf(a *wire.Approvers) *stage.Approvers {
	if a == nil {
		return nil
	}
	return &stage.Approvers{Roles: a.Roles, Names: a.Names, Count: a.Count, NotSubmitter: a.NotSubmitter}
}

// approversFrom maps a rule to the wire (nil: nil); the submitter it names is the plan's
// submittedBy.
func approversFrom(a *stage.Approvers) *wire.Approvers {
	if a == nil {
		return nil
	}
	return &wire.Approvers{Roles: a.Roles, Names: a.Names, Count: a.Count, NotSubmitter: a.NotSubmitter}
}

// approvalFrom maps one decision.
func approvalFrom(d stage.Decision) wire.Approval {
	return wire.Approval{Approved: d.Approved, By: d.By, Role: d.Role, Comment: d.Comment, DecidedAt: d.DecidedAt}
}

// approvalsFrom maps decisions (none: nil).
func approvalsFrom(ds []stage.Decision) []wire.Approval {
	if len(ds) == 0 {
		return nil
	}
	out := make([]wire.Approval, len(ds))
	for i, d := range ds {
		out[i] = approvalFrom(d)
	}
	return out
}

// destinationsOf converts notification destinations (none: nil).
func destinationsOf(ns []wire.NotifyRequest) []plan.Destination {
	if len(ns) == 0 {
		return nil
	}
	out := make([]plan.Destination, len(ns))
	for i, n := range ns {
		out[i] = plan.Destination{URL: n.URL, On: n.On, Format: n.Format, Secret: n.Secret}
	}
	return out
}

// destinationsFrom maps a plan's destinations to their wire form, URLs redacted (none: nil).
func destinationsFrom(ds []plan.Destination) []wire.Destination {
	if len(ds) == 0 {
		return nil
	}
	out := make([]wire.Destination, len(ds))
	for i, d := range ds {
		format := d.Format
		if format == "" {
			format = plan.FormatJSON
		}
		out[i] = wire.Destination{Index: i, URL: d.RedactedURL(), On: d.On, Format: format, Secret: d.Secret}
	}
	return out
}
