package cli

import "strings"

// labelFlag reads plan list's -l/--label: KEY=VALUE selectors (split at the first "="), into
// the labels a plan must have. A selector without "=" or with an empty key, or a key given twice
// with two values, is a usage error; the executor checks the keys themselves.
func labelFlag(selectors []string) (map[string]string, error) {
	if len(selectors) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(selectors))
	for _, s := range selectors {
		k, v, ok := strings.Cut(strings.TrimSpace(s), "=")
		if !ok || k == "" {
			return nil, usagef("invalid --label %q: want KEY=VALUE", s)
		}
		if prev, dup := out[k]; dup && prev != v {
			return nil, usagef("invalid --label: %s is given twice (%q and %q): a plan has one value per label", k, prev, v)
		}
		out[k] = v
	}
	return out, nil
}
