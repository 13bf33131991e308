package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/wire"
)

// eventTime is how an event's time is printed: RFC 3339 in UTC, to the millisecond.
const eventTime = "2006-01-02T15:04:05.000Z07:00"

func (a *invocation) eventsCmd() *cobra.Command {
	var planID, tenant string
	cmd := &cobra.Command{
		Use:   "events [--plan ID] [--tenant T]",
		Short: "Follow plan, task and stage transitions as they happen",
		Long: `Follow the executor's transitions (GET /v1/events) as they happen, one line per event, until
interrupted (Ctrl-C exits 0): plan events (a plan's status changed), task events (a task's
status changed, or a failed attempt that will be retried) and stage events (a task completed a
stage). Only new events are printed: nothing before the command started. On Redis every
executor sharing it answers the same stream.

  --plan ID     one plan's events: its own and its tasks'
  --tenant T    one tenant's task and stage events (with --plan, also the plan's own)

A dropped connection (the executor restarted, a proxy cut it) is resumed after the last event
printed, none missed nor printed twice, saying so on stderr; when events after it are gone a
'gap' line says so: reload the state ('executor plan show ID'). -o json prints each event as
one line of JSON (wire.Event; a gap is {"kind":"gap"}); -o yaml as a YAML document after a
"---" line. -o name is a usage error: an event has no id of its own.`,
		Example: `  executor events --plan 01JD7X...
  executor events --tenant tenant-001
  executor events --plan 01JD7X... -o json | jq -r 'select(.status == "FAILED") | .tenantId'`,
		Args:        noArgs,
		Annotations: map[string]string{annotationNoName: "events"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			q := client.EventsQuery{
				Plan: planID, Tenant: tenant,
				OnConnect: func(resumed bool) {
					if resumed {
						fmt.Fprintln(a.stderr, "events: reconnected")
						return
					}
					fmt.Fprintf(a.stderr, "following events%s; Ctrl-C stops\n", eventsScope(planID, tenant))
				},
				OnDrop: func(err error, last string, retry time.Duration) {
					after := "new events only: none was received yet"
					if last != "" {
						after = "after event " + last
					}
					fmt.Fprintf(a.stderr, "events: connection lost: %s; reconnecting in %s (%s)\n", oneLine(err.Error()), retry, after)
				},
			}
			err = c.FollowEvents(ctx, q, a.printEvent(planID, stageNames(ctx, c)))
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				return nil // interrupted: the way to stop following
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&planID, "plan", "", "only this plan's events (its own and its tasks')")
	f.StringVarP(&tenant, "tenant", "t", "", "only this tenant's task and stage events")
	return cmd
}

// eventsScope is " of plan P, tenant T" for the filters given.
func eventsScope(planID, tenant string) string {
	var parts []string
	if planID != "" {
		parts = append(parts, "plan "+planID)
	}
	if tenant != "" {
		parts = append(parts, "tenant "+tenant)
	}
	if len(parts) == 0 {
		return " of every plan"
	}
	return " of " + strings.Join(parts, ", ")
}

// stageNames returns the names of a plan's stages, read once per plan (GET /v1/plans/{id})
// and kept: task events carry their stage's index only. nil when the plan cannot be read.
func stageNames(ctx context.Context, c *client.Client) func(planID string) []string {
	known := map[string][]string{}
	return func(planID string) []string {
		if names, ok := known[planID]; ok {
			return names
		}
		var names []string
		if p, err := c.Plan(ctx, planID, 0); err == nil {
			names = make([]string, len(p.Stages))
			for i, s := range p.Stages {
				names[i] = s.Name
			}
		}
		known[planID] = names
		return names
	}
}

// printEvent writes each event as one line: JSON under -o json, a YAML document (after
// "---") under -o yaml, else eventLine with the names of its plan's stages (stages reads
// them).
func (a *invocation) printEvent(planID string, stages func(planID string) []string) func(wire.Event) error {
	return func(e wire.Event) error {
		switch a.output {
		case OutputJSON:
			if e.Kind == client.EventGap {
				_, err := fmt.Fprintln(a.stdout, `{"kind":"gap"}`)
				return err
			}
			b, err := json.Marshal(e)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(a.stdout, "%s\n", b)
			return err
		case OutputYAML: // a stream of YAML documents
			if _, err := fmt.Fprintln(a.stdout, "---"); err != nil {
				return err
			}
			if e.Kind == client.EventGap {
				_, err := fmt.Fprintln(a.stdout, "kind: gap")
				return err
			}
			return writeYAML(a.stdout, e)
		}
		var names []string
		if e.Kind != client.EventGap && e.Kind != client.EventPlan {
			names = stages(e.PlanID)
		}
		_, err := fmt.Fprintln(a.stdout, eventLine(e, names, planID, time.Now()))
		return err
	}
}

// eventLine is one event as a line of text: time, kind, plan, tenant, status, then what
// happened, the stages named as a task's STAGE cell does (stages are the names of the plan's
// stages; nil: unknown, the stage's 0-based index is shown), e.g.
//
//	2026-11-21T18:59:54.100Z  stage  01JD7X...  tenant-a  RUNNING      completed restart (2/4), run 1
//	2026-11-21T18:59:54.100Z  task   01JD7X...  tenant-a  RUNNING      at restart (2/4), run 1, attempt 1 of restart failed: timeout
//
// A gap (dated now) says to reload the state.
func eventLine(e wire.Event, stages []string, planID string, now time.Time) string {
	if e.Kind == client.EventGap {
		reload := "executor plan show ID"
		if planID != "" {
			reload = "executor plan show " + planID
		}
		return fmt.Sprintf("%s  %-5s  events were missed (the server no longer holds them): reload the state: %s",
			now.UTC().Format(eventTime), e.Kind, reload)
	}
	tenant := e.TenantID
	if tenant == "" {
		tenant = "-"
	}
	line := fmt.Sprintf("%s  %-5s  %s  %s  %-11s", e.At.UTC().Format(eventTime), cell(e.Kind), cell(e.PlanID), cell(tenant), cell(e.Status))
	var what []string
	switch e.Kind {
	case client.EventStage:
		what = append(what, "completed "+eventStage(e.Stage, e.StageName, stages))
	case client.EventUndo:
		what = append(what, "undid "+eventStage(e.Stage, e.StageName, stages))
	case client.EventTask:
		what = append(what, "at "+eventStage(e.Stage, e.StageName, stages))
	}
	if e.Run > 0 {
		what = append(what, fmt.Sprintf("run %d", e.Run))
	}
	if at := e.LastAttempt; at != nil && e.Kind == client.EventTask && at.Outcome != "succeeded" {
		s := fmt.Sprintf("attempt %d of %s %s", at.Attempt, at.Stage, at.Outcome)
		if at.Class != "" {
			s += ": " + at.Class
		}
		what = append(what, s)
	}
	if len(what) > 0 {
		line += "  " + cell(strings.Join(what, ", "))
	}
	return strings.TrimRight(line, " ")
}

// eventStage names a stage of an event: "restart (2/4)", allStagesDone past the last one, or
// without the plan's stages its name, else "stage <index>" (0-based).
func eventStage(index int, name string, stages []string) string {
	n := len(stages)
	switch {
	case n > 0 && index >= n:
		return allStagesDone
	case n > 0 && index >= 0:
		return fmt.Sprintf("%s (%d/%d)", stages[index], index+1, n)
	case name != "":
		return name
	}
	return fmt.Sprintf("stage %d", index)
}
