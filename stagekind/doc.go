// Package stagekind holds the built-in stage kinds and the Registry that maps a kind name to
// its stage.Handler.
//
// Built-in kinds (see Builtin):
//   - noop: does nothing and outputs null;
//   - sleep: waits for params.duration (bake time), returning as soon as its context is done;
//   - http: sends one HTTP request per attempt, with an Idempotency-Key header, and turns the
//     response into the stage's output or into a classified *stage.Error (DESIGN §4).
//
// Handlers that can check their params before anything runs implement stage.ParamValidator;
// their errors are *stage.FieldError values naming the param (for example "url") and match
// ErrInvalidParams with errors.Is. A handler given invalid params at run time fails with a
// permanent error wrapping the same *stage.FieldError.
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
// The package imports only the standard library and domain/stage.
package stagekind
