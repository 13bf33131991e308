package oapigen_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/tools/oapigen/execclient"
)

// helloPlan is examples/hello.json read into the generated PlanRequest, refusing a field the
// generated model lacks.
func helloPlan(t *testing.T) execclient.PlanRequest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "hello.json"))
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var plan execclient.PlanRequest
	require.NoError(t, dec.Decode(&plan), "examples/hello.json into the generated PlanRequest")
	return plan
}

func newClient(t *testing.T, url string) *execclient.ClientWithResponses {
	t.Helper()
	c, err := execclient.NewClientWithResponses(url)
	require.NoError(t, err)
	return c
}

// The generated client submits a plan, replays it, dry-runs it and reads it back; both
// answers 200 of POST /v1/plans (a replayed plan, a dry run) are told apart by their `kind`
// discriminator. servertest checks every answer against docs/openapi.yaml too.
func TestGeneratedClientSubmitsDryRunsAndReadsAPlan(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	c := newClient(t, srv.URL())
	ctx := t.Context()
	plan := helloPlan(t)
	key := "oapigen-hello"

	created, err := c.SubmitPlanWithResponse(ctx, &execclient.SubmitPlanParams{IdempotencyKey: &key}, plan)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, created.StatusCode(), "%s", created.Body)
	require.NotNil(t, created.JSON201)
	assert.Equal(t, execclient.PlanKindPlan, created.JSON201.Kind)
	assert.Equal(t, "hello", created.JSON201.Name)
	planID := created.JSON201.PlanId

	replayed, err := c.SubmitPlanWithResponse(ctx, &execclient.SubmitPlanParams{IdempotencyKey: &key}, plan)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, replayed.StatusCode(), "%s", replayed.Body)
	require.NotNil(t, replayed.JSON200)
	v, err := replayed.JSON200.ValueByDiscriminator()
	require.NoError(t, err)
	require.IsType(t, execclient.Plan{}, v, "a replayed submission is a plan")
	assert.Equal(t, planID, v.(execclient.Plan).PlanId)
	require.NotNil(t, replayed.Headers200)
	require.NotNil(t, replayed.Headers200.IdempotentReplayed)
	assert.Equal(t, "true", *replayed.Headers200.IdempotentReplayed)

	dryRun, limit := true, 2
	dry, err := c.SubmitPlanWithResponse(ctx, &execclient.SubmitPlanParams{DryRun: &dryRun, PreviewLimit: &limit}, plan)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, dry.StatusCode(), "%s", dry.Body)
	require.NotNil(t, dry.JSON200)
	kind, err := dry.JSON200.Discriminator()
	require.NoError(t, err)
	require.Equal(t, "dryRun", kind)
	v, err = dry.JSON200.ValueByDiscriminator()
	require.NoError(t, err)
	require.IsType(t, execclient.DryRun{}, v, "a dry run is no plan")
	preview := v.(execclient.DryRun)
	assert.Equal(t, 3, preview.Summary.Tenants)
	require.Len(t, preview.Tenants, 2, "one page of previewLimit tenants")
	assert.Equal(t, "tenant-a", preview.Tenants[0].TenantId)
	require.NotNil(t, preview.Page.NextOffset)
	assert.Equal(t, 2, *preview.Page.NextOffset)

	got, err := c.GetPlanWithResponse(ctx, planID, &execclient.GetPlanParams{})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, got.StatusCode(), "%s", got.Body)
	require.NotNil(t, got.JSON200)
	assert.Equal(t, planID, got.JSON200.PlanId)
	assert.Equal(t, execclient.PlanKindPlan, got.JSON200.Kind)
	assert.Len(t, got.JSON200.Stages, 4)
}

// sseEvent is one server-sent event: its event and id lines and its data, an Event.
type sseEvent struct {
	name, id string
	data     execclient.Event
}

// readEvents parses a text/event-stream body, sending each event whose data is an Event;
// it returns the read's error once the body ends (a cancelled request's context ends it).
func readEvents(body io.Reader, out chan<- sseEvent) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var ev sseEvent
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch {
		case line == "": // the end of an event
			if data.Len() > 0 && json.Unmarshal([]byte(data.String()), &ev.data) == nil {
				out <- ev
			}
			ev, data = sseEvent{}, strings.Builder{}
		case field == "": // a comment (": heartbeat")
		case field == "event":
			ev.name = value
		case field == "id":
			ev.id = value
		case field == "data":
			data.WriteString(value)
		}
	}
	return sc.Err()
}

// The event stream is read with the generated Client, whose answer is the *http.Response:
// its body is read as it comes, and cancelling the request's context ends the read.
func TestGeneratedClientStreamsEvents(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	raw, err := execclient.NewClient(srv.URL())
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	resp, err := raw.StreamEvents(ctx, &execclient.StreamEventsParams{})
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"), resp.Header.Get("Content-Type"))
	events := make(chan sseEvent, 1024)
	done := make(chan error, 1)
	go func() { done <- readEvents(resp.Body, events) }()

	created, err := newClient(t, srv.URL()).SubmitPlanWithResponse(t.Context(), &execclient.SubmitPlanParams{}, helloPlan(t))
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, created.StatusCode(), "%s", created.Body)

	select {
	case ev := <-events:
		assert.Equal(t, created.JSON201.PlanId, ev.data.PlanId)
		assert.Equal(t, string(ev.data.Kind), ev.name, "the event line is the data's kind")
		assert.Equal(t, ev.data.Id, ev.id, "the id line is the data's id")
	case err := <-done:
		t.Fatalf("the stream ended before its first event: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s of the submission")
	}
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled, "the read ends with the request's context")
	case <-time.After(5 * time.Second):
		t.Fatal("the stream's read did not return after its context was cancelled")
	}
}

// ClientWithResponses reads the whole body before it returns: on the endless event stream it
// returns only when the request's context ends, with an error and no events. Read the stream
// with Client instead (above).
func TestClientWithResponsesWaitsForTheStreamToEnd(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	c := newClient(t, srv.URL())

	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	resp, err := c.StreamEventsWithResponse(ctx, &execclient.StreamEventsParams{})
	require.Error(t, err, "an endless stream has no whole body to return")
	assert.Nil(t, resp)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "ends with its context: %v", err)
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
}
