package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/domain/plan"
)

func (a *app) submitCmd() *cobra.Command {
	var (
		file, idemKey string
		wait, dryRun  bool
	)
	cmd := &cobra.Command{
		Use:   "submit -f FILE",
		Short: "Submit a plan (YAML or JSON)",
		Long: `Submit a plan read from FILE (.yaml/.yml is sent as YAML, .json as JSON; "-" reads
standard input, YAML or JSON). The created plan is printed.

--dry-run validates the plan, renders every tenant's stages and reports conflicting tenants
without creating anything; it exits 1 when a tenant conflicts (the submission would be
refused). --wait waits until the plan ends and exits 1 unless it ends COMPLETED; on a terminal
it shows a live progress line. --idempotency-key makes a repeated submission return the first
plan instead of creating another.`,
		Example: `  executor submit -f examples/hello.yaml
  executor submit -f plan.json --wait
  executor submit -f plan.yaml --dry-run
  generate-plan | executor submit -f - --idempotency-key release-42 -o json`,
		Args:    noArgs,
		PreRunE: requireFlags("file"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if wait && dryRun {
				return usagef("--wait and --dry-run cannot be used together")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			body, contentType, err := a.readPlan(file)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			p, dry, err := c.SubmitPlan(ctx, body, contentType, idemKey, dryRun)
			if err != nil {
				return err
			}
			if dryRun {
				if err := a.print(dry, dryRunTable(*dry)); err != nil {
					return err
				}
				if len(dry.Conflicts) > 0 {
					return fmt.Errorf("dry run: %d tenant(s) have a task that has not ended: %s",
						len(dry.Conflicts), strings.Join(dry.Conflicts, ", "))
				}
				return nil
			}
			if wait {
				return a.waitAndPrint(cmd, c, p.PlanID)
			}
			return a.print(p, planTable(*p))
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "file", "f", "", `plan file (.yaml, .yml or .json); "-" reads standard input (required)`)
	f.BoolVar(&wait, "wait", false, "wait until the plan ends; exit 1 unless it ends COMPLETED")
	f.BoolVar(&dryRun, "dry-run", false, "validate and render without creating anything")
	f.StringVar(&idemKey, "idempotency-key", "", "Idempotency-Key header: a repeated key returns the first plan")
	return cmd
}

// readPlan reads a plan file and picks its content type: by extension for .yaml, .yml and
// .json, by its first character otherwise (standard input included): "{" is JSON, anything
// else YAML (of which JSON is a subset).
func (a *app) readPlan(name string) ([]byte, string, error) {
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
		return body, client.ContentTypeYAML, nil
	case ".json":
		return body, client.ContentTypeJSON, nil
	}
	if bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n\ufeff"), []byte("{")) {
		return body, client.ContentTypeJSON, nil
	}
	return body, client.ContentTypeYAML, nil
}

// waitAndPrint waits for a plan to end, prints it, and fails unless it COMPLETED.
func (a *app) waitAndPrint(cmd *cobra.Command, c *client.Client, id string) error {
	p, err := a.waitPlan(cmd.Context(), c, id)
	if err != nil {
		return err
	}
	if err := a.print(p, planTable(*p)); err != nil {
		return err
	}
	if plan.Status(p.Status) != plan.Completed {
		return fmt.Errorf("plan %s ended %s", p.PlanID, p.Status)
	}
	return nil
}
