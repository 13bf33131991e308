package api

import (
	"fmt"
	"net/http"
	"strings"
)

// labelSelector reads ?label= of a plan listing: each key=value (split at the first "="), repeated for
// several, every one of which a plan must have; nil when there is none. A value without "=",
// an empty key or a key given twice is a 400 naming label (the use case checks the keys).
func labelSelector(r *http.Request) (map[string]string, error) {
	vals := r.URL.Query()["label"]
	if len(vals) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(vals))
	for _, v := range vals {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return nil, invalid("label", fmt.Sprintf("%q is not a key=value label selector", v))
		}
		if prev, dup := out[k]; dup {
			return nil, invalid("label", fmt.Sprintf("label %q is given twice (%q and %q): a plan has one value per label", k, prev, val))
		}
		out[k] = val
	}
	return out, nil
}
