package stagekind

import (
	"errors"
	"sort"

	"github.com/executor-dev/executor/domain/stage"
)

// ErrInvalidParams is matched (errors.Is) by every params error of a built-in kind. Such errors
// are *stage.FieldError values whose Field names the param, for example "url" or
// "headers.Accept".
var ErrInvalidParams = errors.New("invalid stage params")

func paramError(param, reason string) error {
	return &stage.FieldError{Field: param, Reason: reason, Err: ErrInvalidParams}
}

// checkKnownParams rejects params not in known, so that a typo ("metod") is an error rather
// than a silent default. The first unknown name in sorted order is reported.
func checkKnownParams(params map[string]any, known ...string) error {
	names := make([]string, 0, len(params))
	for name := range params {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		found := false
		for _, k := range known {
			found = found || name == k
		}
		if !found {
			return paramError(name, "is not a param of this kind")
		}
	}
	return nil
}

// invalidParams is the run-time failure for params that do not validate: retrying cannot help.
func invalidParams(err error) error {
	return stage.Permanent(err)
}
