// Package stagekind holds the built-in stage kinds and the Registry that maps a kind name to
// its stage.Handler.
//
// Built-in kinds (see Builtin):
//   - noop: does nothing and outputs null;
//   - sleep: waits for params.duration (bake time), returning as soon as its context is done;
//   - http: sends one HTTP request per attempt, with an Idempotency-Key header (the in-doubt
//     attempt's key when the stage's last attempt is in doubt) and the run's fencing token in
//     Executor-Fence, and turns the response into the stage's output or into a classified
//     *stage.Error (docs/design.md §4);
//   - exec: runs one command per attempt, in a process group of its own that is killed when
//     the attempt ends, with only the environment it is given; the command must be on the
//     allow-list (ExecOptions.Allow, serve's --exec-allow), or the kind is disabled;
//   - approval: a manual gate; it returns stage.Await, so the task waits (WAITING, holding no
//     worker and no lease) until an operator approves (the stage passes, its output the
//     decision) or rejects (it fails permanently, matching ErrRejected);
//   - prometheus: a metric analysis through the Prometheus HTTP API's instant query, measured
//     count times every interval (a stage, or a ring's analysis), with the http kind's guard
//     (PrometheusOptions.AllowList, serve's --prometheus-allow).
//
// The http kind's conditions (success, failure, poll's until and failWhen) and the
// prometheus kind's are expr-lang expressions, compiled and cached by one evaluator
// (condition.go).
//
// The http kind guards against server-side request forgery: every address it connects to
// (checked at dial time, after DNS, so a rebinding name cannot slip through) and every
// redirect target is checked against HTTPOptions.Allow, an AllowList of IPs, CIDRs, hostnames
// and "*." wildcards (serve's --http-allow). Link-local, cloud metadata, unspecified,
// multicast and broadcast addresses are denied unless an IP or CIDR entry lists them; an
// empty list allows everything else. A denied destination fails permanently with an error
// matching ErrDestinationDenied. The guard owns the client's transport: environment proxies
// are not used. Response bodies are read up to HTTPOptions.MaxResponseBytes.
//
// Handlers that can check their params before anything runs implement stage.ParamValidator;
// their errors are *stage.FieldError values naming the param (for example "url") and match
// ErrInvalidParams with errors.Is. A handler given invalid params at run time fails with a
// permanent error wrapping the same *stage.FieldError.
//
// Handlers some of whose params are URLs implement stage.URLParamer (the http kind declares
// "url"): what a template inserts into such a param is escaped for where it lands, with
// url.PathEscape in the path and url.QueryEscape in the query or fragment; an action before
// the path begins ("{{.Params.endpoint}}/deploy") inserts the base as is. A template that reads
// a missing output key or a null, in any param of any kind, fails the stage permanently before
// the handler runs (stage.ErrNoValue): no handler ever sees "<no value>".
//
// Go users add their own kinds by registering a stage.Handler under a new name:
//
//	reg := stagekind.Builtin(stagekind.HTTPOptions{})
//	err := reg.Register("dns-flush", stage.HandlerFunc(
//		func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
//			if err := flush(ctx, req.TenantID); err != nil {
//				return nil, stage.Retryable(err)
//			}
//			return json.RawMessage(`{"flushed":true}`), nil
//		}))
//
// The package imports only the standard library, domain/stage and expr-lang (the conditions).
package stagekind
