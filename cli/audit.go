package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/domain/audit"
	"github.com/executor-dev/executor/wire"
)

// maxAuditPages bounds the pages audit --all reads: past them it stops, printing what it
// read and the cursor that goes on.
const maxAuditPages = 100

// shortPlanID is how many characters of a plan id the audit table's TARGET shows.
const shortPlanID = 10

const auditLong = `List the operator actions (GET /v1/audit), newest first: every submission, pause, resume,
cancel, retry, rollback, gate or ring decision, action on a filter (bulk-<action>) and unlock,
with who took it (ACTOR: the token's holder, "anonymous" for a token without a name or an open
API; ROLE), what was asked (DETAILS: the request, then → what came of it) and its RESULT:
applied, refused with the reason's code, or pending (the executor stopped before it could
record the outcome: the plan or the tenant tells whether it took effect). Records live as long
as their plan.

  --plan ID      one plan's actions (without: every plan's, the newest plans first)
  --tenant T     the actions on one tenant
  --actor NAME   the actions of one token holder
  --action A     one action: submit, pause, resume, cancel, retry, rollback, approve, reject,
                 unlock, bulk-approve, bulk-reject, bulk-retry, bulk-cancel, bulk-rollback
  --limit N      records per page (1 to 1000, default 100)
  --cursor C     the page after C: the cursor a previous page named
  --all          every page, following the cursors (at most 100 pages)

When there are more records, the table ends with the --cursor of the next page on stderr; -o
json prints the page (wire.AuditPage) with its nextCursor, and with --all one page holding
every record read.`

func (a *invocation) auditCmd() *cobra.Command {
	var q client.AuditQuery
	var all bool
	cmd := &cobra.Command{
		Use:   "audit [--plan ID] [--tenant T] [--actor NAME] [--action A] [--limit N] [--cursor C] [--all]",
		Short: "List operator actions: who took them, what came of them",
		Long:  auditLong,
		Example: `  executor audit --plan 01JD7X...
  executor audit --actor alice --action approve
  executor audit --plan 01JD7X... --all -o json | jq -r '.records[] | select(.result == "refused") | .actor'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkAuditFlags(cmd, q); err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			page, pages, err := readAudit(cmd.Context(), c, q, all)
			if err != nil {
				return err
			}
			if err := a.print(page, auditTable(*page)); err != nil {
				return err
			}
			switch {
			case page.NextCursor == "":
			case all:
				fmt.Fprintf(a.stderr, "stopped after %d pages (%d records); more records: --cursor %s\n", pages, len(page.Records), page.NextCursor)
			case !a.structured():
				fmt.Fprintf(a.stderr, "more records: --cursor %s\n", page.NextCursor)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&q.Plan, "plan", "", "only this plan's actions (its id)")
	f.StringVarP(&q.Tenant, "tenant", "t", "", "only the actions on this tenant")
	f.StringVar(&q.Actor, "actor", "", "only the actions of this token holder (anonymous: tokens without a name, or an open API)")
	f.StringVar(&q.Action, "action", "", "only this action (submit, pause, resume, cancel, retry, rollback, approve, reject, skip, unlock, bulk-<action>)")
	f.IntVar(&q.Limit, "limit", audit.DefaultLimit, fmt.Sprintf("records per page (1 to %d)", audit.MaxLimit))
	f.StringVar(&q.Cursor, "cursor", "", "the page after this cursor (the one a previous page named)")
	f.BoolVar(&all, "all", false, fmt.Sprintf("read every page, following the cursors (at most %d pages)", maxAuditPages))
	return cmd
}

// checkAuditFlags refuses a --limit out of bounds and a filter given empty (an unset shell
// variable would otherwise list every plan's actions).
func checkAuditFlags(cmd *cobra.Command, q client.AuditQuery) error {
	if q.Limit < 1 || q.Limit > audit.MaxLimit {
		return usagef("invalid --limit %d: want 1 to %d", q.Limit, audit.MaxLimit)
	}
	for _, name := range []string{"plan", "tenant", "actor", "action", "cursor"} {
		if cmd.Flags().Changed(name) && cmd.Flags().Lookup(name).Value.String() == "" {
			return usagef("invalid --%s \"\": give a value, or leave the flag out", name)
		}
	}
	return nil
}

// readAudit reads the page q names, or with all every page from it on, following the cursors
// for at most maxAuditPages pages: one page holding every record read, its NextCursor the
// cursor of the first page not read ("" at the end), and how many pages were read.
func readAudit(ctx context.Context, c *client.Client, q client.AuditQuery, all bool) (*wire.AuditPage, int, error) {
	out := &wire.AuditPage{Records: []wire.AuditRecord{}}
	pages := 0
	for {
		page, err := c.AuditTrail(ctx, q)
		if err != nil {
			return nil, pages, err
		}
		pages++
		out.Records = append(out.Records, page.Records...)
		out.NextCursor = page.NextCursor
		if !all || page.NextCursor == "" || pages == maxAuditPages {
			return out, pages, nil
		}
		q.Cursor = page.NextCursor
	}
}

// auditTable draws one line per record: TIME, ACTOR, ROLE, ACTION, TARGET (the tenant, or the
// plan's id cut short), RESULT and DETAILS.
func auditTable(p wire.AuditPage) func(io.Writer) {
	return func(w io.Writer) {
		fmt.Fprintln(w, "TIME\tACTOR\tROLE\tACTION\tTARGET\tRESULT\tDETAILS")
		for _, r := range p.Records {
			row(w, formatTime(&r.At), r.Actor, r.Role, r.Action, auditTarget(r), auditResult(r), auditDetails(r))
		}
	}
}

// auditTarget is the tenant an action touched, or the plan's id cut short for a plan-wide one.
func auditTarget(r wire.AuditRecord) string {
	if r.Tenant != "" {
		return r.Tenant
	}
	if len(r.PlanID) > shortPlanID {
		return r.PlanID[:shortPlanID] + "…"
	}
	return r.PlanID
}

// auditResult is applied, pending, or "refused: <code>".
func auditResult(r wire.AuditRecord) string {
	if r.Result == string(audit.Refused) && r.Code != "" {
		return r.Result + ": " + r.Code
	}
	return r.Result
}

// auditDetails is the request's key=value pairs, then "→" and the outcome's, each sorted by
// key.
func auditDetails(r wire.AuditRecord) string {
	var parts []string
	if s := auditAttrs(r.Request); s != "" {
		parts = append(parts, s)
	}
	if s := auditAttrs(r.Outcome); s != "" {
		parts = append(parts, "→", s)
	}
	return strings.Join(parts, " ")
}

// auditAttrs is m as key=value pairs sorted by key: a comment or an error (free text)
// quoted and cut at maxCell characters, any other value quoted when it is empty or holds a
// space, a quote, an = or a character that does not print.
func auditAttrs(m map[string]string) string {
	pairs := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		switch {
		case k == "comment" || k == "error":
			v = strconv.Quote(truncate(v, maxCell))
		case v == "" || strings.IndexFunc(v, needsQuote) >= 0:
			v = strconv.Quote(v)
		}
		pairs = append(pairs, k+"="+v)
	}
	return strings.Join(pairs, " ")
}

// needsQuote reports whether r makes a value of DETAILS ambiguous unquoted.
func needsQuote(r rune) bool {
	return unicode.IsSpace(r) || r == '"' || r == '=' || !unicode.IsPrint(r)
}
