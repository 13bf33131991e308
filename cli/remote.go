package cli

import "context"

// call sends one request of the rollout-control routes (bulk retry, gate decisions, the lock
// tools) through client.Client.Call: to --server with --token, body (when not nil) as JSON; a
// non-2xx answer is a *client.Error, so that it prints, and sets the exit status, like every
// other remote error.
func (a *invocation) call(ctx context.Context, method, path string, body, out any) error {
	c, err := a.client() // checks --server
	if err != nil {
		return err
	}
	return c.Call(ctx, method, path, body, out)
}
