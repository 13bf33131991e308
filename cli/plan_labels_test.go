package cli_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/wire"
)

// plan list -l lists the plans that have every label given, repeated or comma-separated.
func TestPlanListByLabels(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	url := srv.URL()
	labelled := func(name string, labels map[string]string) string {
		return submitRequest(t, url, wire.PlanRequest{Name: name, Labels: labels, Stages: []wire.StageRequest{noop("a")}, Tenants: tenantsOf("pl-" + name)}).PlanID
	}
	prod := labelled("prod", map[string]string{"team": "sre", "env": "prod"})
	labelled("core", map[string]string{"team": "core"})
	dev := labelled("dev", map[string]string{"team": "sre", "env": "dev"})
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"one label", []string{"-l", "team=sre"}, []string{dev, prod}},
		{"comma-separated", []string{"-l", "team=sre,env=prod"}, []string{prod}},
		{"repeated", []string{"--label", "env=dev", "--label", "team=sre"}, []string{dev}},
		{"with a status", []string{"-l", "team=sre", "--status", "PAUSED"}, nil},
		{"none matches", []string{"-l", "team=web"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, url, append([]string{"plan", "list", "-o", "name"}, tt.args...)...)
			requireCode(t, cli.ExitOK, r)
			assert.Equal(t, tt.want, nilIfNone(strings.Fields(r.stdout)))
		})
	}

	t.Run("a key the executor refuses", func(t *testing.T) {
		t.Parallel()
		r := runCLI(t, url, "plan", "list", "-l", "te am=x", "-o", "json")
		requireCode(t, cli.ExitFailure, r)
		doc := requireErrorDoc(t, r)
		assert.Equal(t, 400, doc.Error.Status)
		assert.Equal(t, "label", doc.Error.Field)
	})
}

// nilIfNone is s, or nil when it is empty.
func nilIfNone(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
