package members

import (
	"context"
	"fmt"
)

// checkTopology returns an error wrapping ErrTopology when this executor, just registered,
// cannot run with the live executors registered besides it: alone, when any other is alive
// (memory stands in for Redis only for the one executor on it: with another, both would
// deploy from copies the other cannot see); shared, when one of them runs alone. A List
// that fails (Redis went away just now) is no conflict: the registration holds.
func (r *Redis) checkTopology(ctx context.Context) error {
	list, err := r.List(ctx)
	if err != nil {
		r.opts.Logger.Warn("members: the other executors could not be listed; topology not checked", "err", err)
		return nil
	}
	for _, m := range list {
		if !m.Alive || m.Name == r.opts.Name {
			continue
		}
		switch {
		case r.opts.Topology == TopologyAlone:
			return fmt.Errorf("%w: this executor runs alone (--topology alone) but executor %q (%s, topology %s) is alive on the same Redis and prefix; "+
				"run every executor of a shared Redis with --topology shared (the default), or give this one a Redis (or --prefix) of its own",
				ErrTopology, m.Name, m.Address, orUnknown(m.Topology))
		case m.Topology == TopologyAlone:
			return fmt.Errorf("%w: executor %q (%s) runs alone (--topology alone) on this Redis and prefix: no other executor may join it; "+
				"stop it and start every executor with --topology shared (the default), or give this one a Redis (or --prefix) of its own",
				ErrTopology, m.Name, m.Address)
		}
	}
	return nil
}

// leave undoes a registration Start refused: its liveness key, if still its own, and its
// entry. Best effort: what is left expires within the TTL, and a dead entry is pruned.
func (r *Redis) leave(ctx context.Context) {
	_ = leaveScript.Run(ctx, r.client, []string{r.keys.Executor(r.opts.Name)}, instanceMarker(r.instance)).Err()
	_ = r.client.HDel(ctx, r.keys.Executors(), r.opts.Name).Err()
}

// orUnknown names a topology a registration did not record.
func orUnknown(topology string) string {
	if topology == "" {
		return "unknown"
	}
	return topology
}
