package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// Call sends one JSON request to path (already escaped) on the server, body marshalled as JSON
// when not nil, and decodes a 2xx answer into out (when not nil); any other answer is an
// *Error carrying the server's problem. It serves routes without a method of their own (the
// rollout-control routes: bulk retry, gate decisions, lock tools), with the same token,
// timeout and error handling as every method.
func (c *Client) Call(ctx context.Context, method, path string, body, out any) error {
	r := request{method: method, path: path}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("client: %s %s: %w", method, path, err)
		}
		r.body, r.header = b, http.Header{"Content-Type": {ContentTypeJSON}}
	}
	return c.do(ctx, r, out)
}
