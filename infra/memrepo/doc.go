// Package memrepo holds in-memory implementations of the plan, task and checkpoint
// repositories, and of the transcripts of stage attempts (transcripts.go): the embedded
// store serve runs on without Redis (NewStore: it keeps everything until an ended plan has
// stayed ended for its retention, then forgets the plan with its tasks, checkpoints,
// transcripts, tenant entries, idempotency key and index, as Redis expires an ended plan's
// keys; see Sweep), the same without a retention (New: it keeps everything, as tests use
// it), and the mirror behind Redis (NewMirror: it keeps what the executor needs and caches a
// bounded number of the rest). Everything is stored as persisted State and loaded on read, so
// callers never share an aggregate with the store, and every read re-checks the domain
// invariants exactly as a Redis read would.
package memrepo
