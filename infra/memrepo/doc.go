// Package memrepo holds in-memory implementations of the plan, task and checkpoint
// repositories, and of the transcripts of stage attempts (transcripts.go): the embedded
// default store (New: it keeps everything), and the mirror behind Redis (NewMirror: it keeps
// what the executor needs and caches a bounded number of the rest). Everything is stored as
// persisted State and loaded on read, so callers never share an aggregate with the store, and
// every read re-checks the domain invariants exactly as a Redis read would.
package memrepo
