package api_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/wire"
)

// fuzzMaxBody is the body limit of FuzzSubmitBody's router: small, so 413s happen too.
const fuzzMaxBody = 8 << 10

// fuzzContentTypes are the Content-Types FuzzSubmitBody sends, picked by its byte argument.
var fuzzContentTypes = []struct {
	value string
	yaml  bool
	ok    bool // a type POST /v1/plans accepts
}{
	{"", false, true}, {"application/json", false, true}, {"application/json; charset=utf-8", false, true},
	{"application/yaml", true, true}, {"text/x-yaml", true, true}, {"text/plain", false, false},
}

// FuzzSubmitBody sends arbitrary bodies, as JSON and YAML, to POST /v1/plans?dryRun=true on
// the real router over a memory-backed Service: the handler's whole decoding path (Content-Type,
// size limit, YAML to JSON, strict decoding, durations) and the use case's validation and
// rendering. Invariants: no 5xx (a panic would be a 500 from the recoverer); an error is a
// problem+json 400 naming a field, a 413 exactly when the body is over the limit, or a 415
// exactly for a type that is neither JSON nor YAML; an accepted body previews exactly the
// tenants, in order, and the stages a plain JSON or YAML reading of it lists. Seeds: below,
// ../examples and testdata/fuzz/FuzzSubmitBody.
func FuzzSubmitBody(f *testing.F) {
	db := memrepo.New()
	svc, _ := apptest.New(f, apptest.Stores{
		Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Locker: lock.NewMemory(),
	}, nil, orchestrator.Config{})
	router := api.NewRouter(svc, api.Options{Logger: slog.New(slog.DiscardHandler), MaxBodyBytes: fuzzMaxBody})

	for _, file := range []string{
		"../examples/hello.json", "../examples/hello.yaml", "../examples/canary-approval.yaml", "../examples/scheduled.yaml",
	} {
		b, err := os.ReadFile(file)
		require.NoError(f, err)
		f.Add(b, byte(1))
		f.Add(b, byte(3))
	}
	for _, seed := range []string{
		validPlan,
		`{"stages":[{"name":"a","kind":"noop"}],"tenants":[{"id":"t"}]}`,
		`{"stages":[{"name":"a","kind":"sleep","params":{"duration":"{{.Params.d}}"},"timeout":"1s",` +
			`"retry":{"maxAttempts":2,"initialBackoff":"1ms","maxBackoff":"2ms","multiplier":1.5,"jitter":"none"}}],` +
			`"tenants":[{"id":"t1","params":{"d":"1s"}},{"id":"t2","params":{"d":"2s"}}],"maxConcurrency":2,"failureBudget":1,` +
			`"labels":{"team":"sre"},"startAt":"2030-01-01T00:00:00Z","name":"n"}`,
		"stages:\n  - {name: a, kind: noop}\ntenants:\n  - id: t\n",
		"stages: [{name: a, kind: noop}]\ntenants: [{id: t}, {id: t}]\n",
		`{"startRate":30,"canary":{"tenants":1,"then":"approve"},"stages":[{"name":"g","kind":"approval",` +
			`"params":{"message":"{{.TenantID}}?"}}],"tenants":[{"id":"t1"},{"id":"t2"}]}`,
		`{"startRate":-1,"canary":{"tenants":5,"then":"later","phase":"X"},"stages":[{"name":"g","kind":"approval",` +
			`"params":{"message":1}}],"tenants":[{"id":"t1"}]}`,
		"tenants: &x [{id: t}]\nstages: [{name: a, kind: noop, params: {x: *x}}]\n",
		"name: &x \"" + strings.Repeat("x", 1024) + "\"\nlabels: {a: *x, b: *x, c: *x, d: *x, e: *x, f: *x, g: *x, h: *x, i: *x}\n",
		"a: &a [x, x, x, x]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nd: &d [*c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d]\n",
		`{"stages":[{"name":"a","kind":"teleport"}],"tenants":[]}`,
		`{"stages":[{"name":"a","kind":"noop","params":{"x":"{{range 100000000}}x{{end}}"}}],"tenants":[{"id":"t1"},{"id":"t2"}]}`,
		`{"stages":[{"name":"a","kind":"noop","params":{"x":"{{range 100000}}{{range 100000}}{{end}}{{end}}"}}],"tenants":[{"id":"t"}]}`,
		`{"stages":[{"name":"a","kind":"noop","params":{"x":"{{range 1000}}{{.TenantID}}{{.TenantID}}{{.TenantID}}{{end}}"}}],"tenants":[{"id":"t1"},{"id":"t2"},{"id":"t3"}]}`,
		`{"maxConcurrency":1e400,"stages":[],"tenants":[{"id":"a:b"}]}`,
		`{"stages":[{"name":"a","kind":"noop","timeout":"-1s"}],"tenants":[{"id":"t"}],"Tenants":[]}`,
		`{"stages":[{"name":"a","kind":"http","params":{"url":"http://x/{{.Params.v"}}],"tenants":[{"id":"t"}]}`,
		`{"stages":[{"name":"a","kind":"noop"}],"tenants":[{"id":"t\u0000"}]} {}`,
		"{\"name\":\"\xff\xfe\"}", `{"name": "x", "stages": [`, "", "null", "[]", "--- a\n--- b\n", "? [a]\n: b\n",
	} {
		for ct := range fuzzContentTypes {
			f.Add([]byte(seed), byte(ct))
		}
	}

	f.Fuzz(func(t *testing.T, body []byte, ctIndex byte) {
		ct := fuzzContentTypes[int(ctIndex)%len(fuzzContentTypes)]
		req := httptest.NewRequest(http.MethodPost, "/v1/plans?dryRun=true", bytes.NewReader(body))
		if ct.value != "" {
			req.Header.Set("Content-Type", ct.value)
		}
		rec := httptest.NewRecorder()
		allocated := allocatedBy(func() { router.ServeHTTP(rec, req) })
		require.LessOrEqual(t, allocated, fuzzMaxAllocated, "bytes allocated for body %q (%s)", body, ct.value)
		res := rec.Result()

		switch {
		case res.StatusCode >= 500:
			t.Fatalf("%d for body %q (%s): %s", res.StatusCode, body, ct.value, rec.Body)
		case !ct.ok:
			require.Equal(t, http.StatusUnsupportedMediaType, res.StatusCode, "body: %s", rec.Body)
		case len(body) > fuzzMaxBody:
			require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, "body: %s", rec.Body)
		case ct.yaml && res.StatusCode == http.StatusRequestEntityTooLarge: // its aliases expand it past the limit
			var p wire.Problem
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
			require.Equal(t, "body", p.Field, "%s", rec.Body)
			return
		case res.StatusCode == http.StatusOK:
			requirePreviewMatches(t, body, ct.yaml, rec.Body.Bytes())
			return
		default:
			require.Equal(t, http.StatusBadRequest, res.StatusCode, "body: %s", rec.Body)
			var p wire.Problem
			require.Equal(t, wire.ProblemContentType, res.Header.Get("Content-Type"))
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
			require.Equal(t, wire.ProblemInvalidInput, p.Type)
			require.NotEmpty(t, p.Field, "a 400 names a field: %s", rec.Body)
			require.NotEmpty(t, p.Errors)
			return
		}
		require.Equal(t, wire.ProblemContentType, res.Header.Get("Content-Type"))
	})
}

// fuzzMaxAllocated bounds what FuzzSubmitBody lets one request allocate, all its garbage
// included: twice the rendering budget of a submission (app.DefaultMaxRenderBytes: what every
// tenant's templates may write together), the rest of the work being a small multiple of the
// 8 KiB body. A template, an alias or a page that escaped its bound would allocate past it.
const fuzzMaxAllocated uint64 = 2 * app.DefaultMaxRenderBytes

// allocatedBy returns the bytes the heap allocated while fn ran (every goroutine's: the fuzz
// worker runs one input at a time, and the dry run starts no work).
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// requirePreviewMatches requires the dry run answer to preview the tenants (ids, in order) and
// stages that body lists, read as plain JSON or YAML.
func requirePreviewMatches(t *testing.T, body []byte, isYAML bool, answer []byte) {
	t.Helper()
	var doc any
	if isYAML {
		require.NoError(t, yaml.Unmarshal(body, &doc), "accepted YAML parses")
	} else {
		require.NoError(t, json.Unmarshal(body, &doc), "accepted JSON parses")
	}
	tenantsDoc, _ := member(doc, "tenants").([]any)
	stagesDoc, _ := member(doc, "stages").([]any)
	var dry wire.DryRun
	require.NoError(t, json.Unmarshal(answer, &dry))
	require.True(t, dry.DryRun)
	require.Equal(t, wire.KindDryRun, dry.Kind)
	require.NotNil(t, dry.Conflicts)
	require.Equal(t, len(tenantsDoc), dry.Summary.Tenants, "as many tenants as the body lists: %s", answer)
	require.Len(t, dry.Tenants, min(len(tenantsDoc), app.DefaultPreviewLimit), "the first page of them: %s", answer)
	for i, tn := range dry.Tenants {
		require.Equal(t, member(tenantsDoc[i], "id"), tn.TenantID)
		require.Len(t, tn.Stages, len(stagesDoc))
	}
}

// member returns v[key] when v is a mapping (as encoding/json or yaml.v3 decode one).
func member(v any, key string) any {
	switch m := v.(type) {
	case map[string]any:
		return m[key]
	case map[any]any:
		return m[key]
	}
	return nil
}
