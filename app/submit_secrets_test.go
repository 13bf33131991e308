package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
)

// secretsOf is an app.Secrets holding values by name.
type secretsOf map[string]string

func (s secretsOf) Secret(name string) (string, error) {
	if v, ok := s[name]; ok {
		return v, nil
	}
	return "", errors.New("no such secret")
}

// A per-tenant secret is named in a tenant's params and read by the stage's template: a dry
// run shows where it goes, never its value. Written as {{secret}} in the tenant's params it
// would reach the stage as written (params are data, not templates): refused, saying how.
func TestATenantsSecretIsNamedInItsParamsNeverWrittenThere(t *testing.T) {
	t.Parallel()
	const value = "tok-91c2-do-not-leak"
	db := memrepo.New()
	svc, _ := apptest.NewWith(t, apptest.Stores{
		Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Locker: lock.NewMemory(),
	}, nil, orchestrator.Config{}, func(d *app.Deps, _ *orchestrator.Orchestrator) {
		d.Secrets = secretsOf{"tok-a": value}
	})
	req := app.SubmitRequest{
		DryRun: true,
		Stages: []stage.Spec{{Name: "push", Kind: "http", Params: map[string]any{
			"url": "http://127.0.0.1:1/deploy", "headers": map[string]any{"Authorization": "Bearer {{secret .Params.token}}"},
		}}},
		Tenants: []app.TenantInput{{ID: "sa", Params: map[string]any{"token": "tok-a"}}},
	}
	sub, err := svc.Submit(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, sub.Preview, 1)
	assert.Equal(t, map[string]any{"Authorization": "Bearer <secret tok-a>"}, sub.Preview[0].Stages[0].Params["headers"])
	shown, err := json.Marshal(sub)
	require.NoError(t, err)
	assert.NotContains(t, string(shown), value, "the dry run never shows the value")

	req.Tenants[0].Params["token"] = `{{secret "tok-a"}}`
	_, err = svc.Submit(context.Background(), req)
	require.ErrorIs(t, err, app.ErrInvalidInput)
	var ve *app.ValidationError
	require.ErrorAs(t, err, &ve)
	require.NotEmpty(t, ve.Violations)
	assert.Equal(t, app.FieldViolation{Field: "tenants[0].params.token", Reason: `a tenant's params are data, not templates: ` +
		`{{secret "tok-a"}} here would reach the stage as written, never the secret; give the secret's name instead (token: tok-a) ` +
		`and read it in the stage's params with {{secret .Params.token}}`}, ve.Violations[0])
}
