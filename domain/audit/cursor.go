package audit

import (
	"fmt"
	"strings"
)

// Cursor is where a page of records goes on: with the records of PlanID ("" for those of no
// plan) stored before Pos, a position of the log that returned it (opaque here).
type Cursor struct {
	PlanID string
	Pos    string
}

// planless stands for "" in a cursor's text.
const planless = "-"

// String is the cursor's text, as a Page's Next and a Query's Cursor carry it.
func (c Cursor) String() string {
	id := c.PlanID
	if id == "" {
		id = planless
	}
	return id + "/" + c.Pos
}

// ParseCursor reads a cursor's text; ok is false for "" (the first page).
func ParseCursor(s string) (c Cursor, ok bool, err error) {
	if s == "" {
		return Cursor{}, false, nil
	}
	id, pos, found := strings.Cut(s, "/")
	if !found || id == "" || pos == "" || len(s) > 128 {
		return Cursor{}, false, fmt.Errorf("%w: cursor %q is not one a page of the audit trail returned", ErrInvalid, s)
	}
	if id == planless {
		id = ""
	}
	return Cursor{PlanID: id, Pos: pos}, true, nil
}

// PageLimit is the number of records a page holds for a query's Limit: DefaultLimit when
// not set, at most MaxLimit.
func PageLimit(n int) int {
	switch {
	case n <= 0:
		return DefaultLimit
	case n > MaxLimit:
		return MaxLimit
	}
	return n
}
