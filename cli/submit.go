package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/wire"
	"github.com/executor-dev/executor/yamlerr"
)

func (a *invocation) submitCmd() *cobra.Command {
	var (
		file, idemKey string
		wait, dryRun  bool
		page          wire.PreviewPage
		timeout       time.Duration
	)
	cmd := &cobra.Command{
		Use:   "submit -f FILE",
		Short: "Submit a plan (YAML or JSON)",
		Long: `Submit a plan read from FILE (.yaml/.yml is sent as YAML, .json as JSON; "-" reads
standard input, YAML or JSON). The created plan is printed.

--dry-run validates the plan, renders every tenant's stages, reports conflicting tenants and
measures every analysis once, without creating anything; it exits 1 when a tenant conflicts
(the submission would be refused) or an analysis measured failed or could not query (a typo
in a query, an unreachable Prometheus). It shows a page of the tenants' rendered stages (--preview-offset, --preview-limit:
the first 20 by default, at most 100), in submission order. --wait waits until the plan ends and exits 1 unless it ends COMPLETED; on a terminal
it shows a live progress line. It exits 3 when nothing of the plan can progress without an
operator (saying what is needed), and 130 on Ctrl-C (naming the plan, which goes on). Before
it waits it says on stderr which plan it submitted; when the executor goes away meanwhile it
exits 1 saying that the plan was submitted and how to follow it on another executor.
--timeout bounds the wait: once it passes it exits 124 naming the plan, which goes on.
--idempotency-key makes a repeated submission of the same plan return the first plan instead
of creating another (stderr says it was replayed); the same key with another plan is refused
(exit 1).

A refused plan lists every invalid field, one per line, on stderr (-o json too).`,
		Example: `  executor submit -f examples/hello.yaml
  executor submit -f plan.json --wait --timeout 30m
  ID=$(executor submit -f plan.yaml -o name)
  executor submit -f plan.yaml --dry-run
  generate-plan | executor submit -f - --idempotency-key release-42 -o json`,
		Args:    noArgs,
		PreRunE: requireFlags("file"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if wait && dryRun {
				return usagef("--wait and --dry-run cannot be used together")
			}
			if err := checkTimeout(cmd, timeout, "wait", wait); err != nil {
				return err
			}
			if !dryRun && (cmd.Flags().Changed("preview-offset") || cmd.Flags().Changed("preview-limit")) {
				return usagef("--preview-offset and --preview-limit go with --dry-run")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			body, contentType, err := a.readPlan(file)
			if err != nil {
				return err
			}
			if dryRun {
				return a.dryRun(cmd, c, body, contentType, page)
			}
			p, replayed, err := c.Submit(cmd.Context(), body, contentType, idemKey)
			if err != nil {
				return a.submitError(err)
			}
			a.submitNotices(*p, replayed)
			if wait {
				fmt.Fprintln(a.stderr, submittedNotice(*p))
				return a.waitAndPrint(cmd, c, p.PlanID, true, timeout)
			}
			return a.print(p, planTable(*p))
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "file", "f", "", `plan file (.yaml, .yml or .json); "-" reads standard input (required)`)
	f.BoolVar(&wait, "wait", false, "wait until the plan ends; exit 1 unless it ends COMPLETED, 3 if it needs an operator")
	timeoutFlag(cmd, &timeout, "wait")
	f.BoolVar(&dryRun, "dry-run", false, "validate and render without creating anything")
	f.IntVar(&page.Offset, "preview-offset", 0, "with --dry-run: the first tenant shown (0-based, in submission order)")
	f.IntVar(&page.Limit, "preview-limit", 0, "with --dry-run: how many tenants are shown (1..100; default 20)")
	f.StringVar(&idemKey, "idempotency-key", "", "Idempotency-Key header: the same key and plan again returns the first plan")
	return cmd
}

// readPlan reads a plan file and picks its content type: by extension for .yaml, .yml and
// .json, by its first character otherwise (standard input included): "{" is JSON, anything
// else YAML (of which JSON is a subset).
func (a *invocation) readPlan(name string) ([]byte, string, error) {
	var body []byte
	var err error
	if name == "-" {
		body, err = io.ReadAll(a.stdin)
	} else {
		body, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, "", fmt.Errorf("read plan: %w", err)
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml":
		return checkYAML(name, body)
	case ".json":
		return body, client.ContentTypeJSON, nil
	}
	if bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n\ufeff"), []byte("{")) {
		return body, client.ContentTypeJSON, nil
	}
	return checkYAML(name, body)
}

// checkYAML returns body to be sent as YAML, or, when it is not valid YAML, an error naming
// the file and the line of the mistake (yamlerr): nothing is sent.
func checkYAML(name string, body []byte) ([]byte, string, error) {
	if err := yamlerr.Check(body); err != nil {
		if name == "-" {
			name = "standard input"
		}
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	return body, client.ContentTypeYAML, nil
}

// waitAndPrint waits for a plan to end or to come to rest, prints it, and fails unless it
// COMPLETED: ExitNeedsOperator at rest, saying what is needed; ExitTimeout when timeout (0:
// none) passes first (planTimeout); ExitInterrupted when the wait is interrupted, naming the
// plan (submitted: it was submitted by this command); when the wait on a plan this command
// submitted fails otherwise, the executor was lost (waitLost).
func (a *invocation) waitAndPrint(cmd *cobra.Command, c *client.Client, id string, submitted bool, timeout time.Duration) error {
	ctx, cancel := waitContext(cmd.Context(), timeout)
	defer cancel()
	p, r, err := a.waitPlan(ctx, c, id)
	if err != nil {
		if timedOut(cmd.Context(), ctx) {
			return planTimeout(cmd.Context(), c, id, timeout)
		}
		if cmd.Context().Err() == nil && submitted {
			return waitLost(id, err)
		}
		return waitInterrupted(cmd.Context(), id, submitted, err)
	}
	if err := a.print(p, planTable(*p)); err != nil {
		return err
	}
	if r != nil {
		return needsOperator(cmd.Context(), c, *p, r)
	}
	if plan.Status(p.Status) != plan.Completed {
		return &exitError{code: ExitFailure, msg: fmt.Sprintf("plan %s ended %s", p.PlanID, p.Status), kind: kindEnded}
	}
	return nil
}

// planTimeout is the failure of a wait on plan id whose timeout d passed: where the plan
// stands (read once more, briefly: left out when it cannot be read) and how to follow it.
func planTimeout(ctx context.Context, c *client.Client, id string, d time.Duration) error {
	what := "plan " + id
	ctx, cancel := context.WithTimeout(ctx, statusRead)
	defer cancel()
	if p, err := c.Plan(ctx, id, 0); err == nil {
		what += fmt.Sprintf(" (%s %s)", p.Status, strings.Join(progressCounts(p.Progress), " "))
	}
	return timeoutError(d, what, "executor plan show "+id+" --watch")
}

// waitLost is the failure of the wait on plan id, which this command submitted, other than an
// interruption: the executor died or went away meanwhile (a transport error or a 5xx: "lost
// the executor"), or answered an error. The plan was submitted whatever happened to the
// executor: the error says so and how to follow it (exit 1).
func waitLost(id string, err error) error {
	what := "lost the executor while waiting"
	if st := client.StatusCode(err); st != 0 && st < 500 {
		what = "the wait failed"
	}
	return &exitError{
		code: ExitFailure,
		msg: fmt.Sprintf("%s: %v; plan %s was submitted: follow it on any executor with executor plan show %s --watch",
			what, err, id, id),
		kind:  kindLost,
		cause: err,
	}
}

// dryRun submits the plan with ?dryRun=true and prints what the executor would do; it fails
// when a tenant conflicts (the submission would be refused).
func (a *invocation) dryRun(cmd *cobra.Command, c *client.Client, body []byte, contentType string, page wire.PreviewPage) error {
	dry, err := c.DryRun(cmd.Context(), body, contentType, page)
	if err != nil {
		return a.submitError(err)
	}
	if err := a.print(dry, dryRunTable(*dry)); err != nil {
		return err
	}
	a.notes(dry.Warnings)
	if len(dry.Conflicts) > 0 {
		return fmt.Errorf("dry run: %w", dryRunConflict(*dry))
	}
	if bad := badMeasurements(*dry); len(bad) > 0 {
		return fmt.Errorf("dry run: %d analysis measurement(s) failed or could not query: %s", len(bad), strings.Join(bad, "; "))
	}
	return nil
}

// badMeasurements names the analyses a dry run measured that failed or could not query (at
// most 5); an inconclusive one (no sample yet) is not.
func badMeasurements(d wire.DryRun) []string {
	var bad []string
	add := func(where string, m wire.Measurement) {
		if (m.Verdict == "failed" || m.Value == "error") && len(bad) < 5 {
			bad = append(bad, where+": "+m.Value+" ("+m.Message+")")
		}
	}
	for k, r := range d.Rings {
		for _, a := range r.Analysis {
			add(fmt.Sprintf("ring %d (%s) analysis %s", k, r.Wave, a.Name), a.Measurement)
		}
	}
	for _, t := range d.Tenants {
		for _, s := range t.Stages {
			if s.Measurement != nil {
				add(fmt.Sprintf("tenant %s stage %s", t.TenantID, s.Name), *s.Measurement)
			}
		}
	}
	return bad
}
