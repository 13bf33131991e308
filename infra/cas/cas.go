// Package cas is the read–apply–save loop of a compare-and-set update, shared by the
// repositories (memory and Redis): read the aggregate, apply the transition, save it only if
// nobody wrote since; when somebody did, read and apply again.
//
// Invariants: the transition sees a fresh copy on every try; a transition's error ends the
// loop with nothing saved; the loop gives up with the store's conflict error after a bounded
// number of tries.
package cas

import "errors"

// MaxTries bounds how often Update applies its transition again after losing the
// compare-and-set to another writer.
const MaxTries = 64

// Update reads an aggregate (read), applies fn to it and saves it (save), again as long as
// save fails with conflict, at most MaxTries times. It returns the aggregate as saved, fn's
// or read's or save's error, or conflict after MaxTries lost races.
func Update[T any](read func() (T, error), fn func(T) error, save func(T) error, conflict error) (T, error) {
	var zero T
	for range MaxTries {
		v, err := read()
		if err != nil {
			return zero, err
		}
		if err := fn(v); err != nil {
			return zero, err
		}
		err = save(v)
		if errors.Is(err, conflict) {
			continue
		}
		if err != nil {
			return zero, err
		}
		return v, nil
	}
	return zero, conflict
}
