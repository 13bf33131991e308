package app

import (
	"github.com/oklog/ulid/v2"

	"github.com/executor-dev/executor/domain/task"
)

// checkULID validates an id that will become part of a key.
func checkULID(field, id string) error {
	if u, err := ulid.ParseStrict(id); err != nil || u.String() != id {
		return invalid(field, "must be a ULID (26 upper-case Crockford base32 characters)")
	}
	return nil
}

// checkTenantID validates a tenant id.
func checkTenantID(field, id string) error {
	if !task.TenantIDPattern.MatchString(id) {
		return invalid(field, "must match "+task.TenantIDPattern.String())
	}
	return nil
}
