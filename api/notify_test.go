package api_test

import (
	"net/http"
	"testing"

	"github.com/executor-dev/executor/wire"
)

// A submission's notification destinations are checked before anything is created: each bad
// field is a 400 naming it.
func TestABadNotifyDestinationIsRefusedNamingTheField(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	tests := []struct {
		name  string
		dest  wire.NotifyRequest
		field string
	}{
		{"no url", wire.NotifyRequest{On: []string{"plan.ended"}}, "notify[0].url"},
		{"not http", wire.NotifyRequest{URL: "ftp://hooks.example/x", On: []string{"plan.ended"}}, "notify[0].url"},
		{"a metadata address", wire.NotifyRequest{URL: "http://169.254.169.254/latest", On: []string{"plan.ended"}}, "notify[0].url"},
		{"no event", wire.NotifyRequest{URL: "https://hooks.example/x"}, "notify[0].on"},
		{"an unknown event", wire.NotifyRequest{URL: "https://hooks.example/x", On: []string{"plan.ended", "tenant.done"}}, "notify[0].on[1]"},
		{"an unknown format", wire.NotifyRequest{URL: "https://hooks.example/x", On: []string{"plan.ended"}, Format: "xml"}, "notify[0].format"},
		{"a secret this executor lacks", wire.NotifyRequest{URL: "https://hooks.example/x", On: []string{"plan.ended"}, Secret: "nope"}, "notify[0].secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := postJSON(t, base+"/v1/plans", wire.PlanRequest{Name: "n", Stages: []wire.StageRequest{{Name: "a", Kind: "noop"}},
				Tenants: tenants("nb-" + tt.field[7:8]), Notify: []wire.NotifyRequest{tt.dest}})
			requireProblem(t, res, http.StatusBadRequest, tt.field)
		})
	}
}
