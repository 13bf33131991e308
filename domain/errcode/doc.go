// Package errcode is the executor's error vocabulary: the kinds of failure a caller can act
// on (invalid input, not found, a refused transition, a busy or unavailable executor...),
// attached to an error where it is defined, so that a transport maps a code, not each
// package's errors, to its answer (the HTTP API: api/problem.go, one table).
//
// Invariants:
//   - a coded error's Error() is its message, as an errors.New of the same text would be;
//     codes change nothing for errors.Is and errors.As;
//   - Detail is what a caller is told: the error's own detail when it has one, else the
//     text of the whole error it was found in (its wrapping context included);
//   - a code says what went wrong, not how a transport answers it: several codes may share
//     an HTTP status.
package errcode
