package stagekind

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/executor-dev/executor/domain/stage"
)

// A custom kind is a stage.Handler registered under a new name.
func ExampleRegistry_Register() {
	reg := Builtin(HTTPOptions{})
	err := reg.Register("cache-purge", stage.HandlerFunc(
		func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
			if req.TenantID == "" {
				return nil, stage.Permanent(errors.New("no tenant"))
			}
			return json.Marshal(map[string]string{"purged": req.TenantID})
		}))
	fmt.Println(err, reg.Kinds())

	h, _ := reg.Handler("cache-purge")
	out, err := h.Run(context.Background(), stage.Request{TenantID: "tenant-001"})
	fmt.Println(string(out), err)

	err = reg.Register("http", stage.HandlerFunc(nil))
	fmt.Println(errors.Is(err, ErrDuplicateKind))
	// Output:
	// <nil> [approval cache-purge exec http noop prometheus sleep]
	// {"purged":"tenant-001"} <nil>
	// true
}
