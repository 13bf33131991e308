package redisrepo

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/infra/outage"
)

// masters is the last map of a Redis Cluster's slot ranges to their masters this store saw
// (checkMasters): the start of each range → its master's node id and address.
type masters map[int]redis.ClusterNode

// checkMasters compares a Redis Cluster's masters with the last ones seen (nothing on one
// node or Sentinel, whose switches the client's dial hook notices): a slot range whose master
// was replaced while the old one is not among the new one's replicas (it died, or was cut off:
// a failover, not a coordinated CLUSTER FAILOVER, after which the old master replicates the
// new one) may have lost writes it acknowledged. That is reported as a loss of data (the
// caller fails the monitor with the error): everything this executor holds is written back
// and the generation renewed.
func (lw *lossWatch) checkMasters(ctx context.Context) error {
	cc, ok := lw.s.client.(*redis.ClusterClient)
	if !ok {
		return nil
	}
	//lint:ignore SA1019 CLUSTER SHARDS needs Redis 7; CLUSTER SLOTS answers on 6 too, and says what is needed here
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		return wrap("cluster slots", err)
	}
	now := masters{}
	replicas := map[int][]string{}
	for _, r := range slots {
		if len(r.Nodes) == 0 {
			continue
		}
		now[r.Start] = r.Nodes[0]
		for _, n := range r.Nodes[1:] {
			replicas[r.Start] = append(replicas[r.Start], n.ID)
		}
	}
	before := lw.lastMasters
	lw.lastMasters = now
	for start, m := range now {
		old, seen := before[start]
		if !seen || old.ID == m.ID || slices.Contains(replicas[start], old.ID) {
			continue
		}
		failed, err := nodeFailed(ctx, cc, old.ID)
		if err != nil {
			lw.lastMasters = before // look again next time
			return err
		}
		if !failed {
			continue // a coordinated failover: the old master lives on (as a replica, soon)
		}
		lw.masterChanged(old.Addr, m.Addr)
		return fmt.Errorf("redisrepo: the master of slots from %d changed from %s to %s: %w", start, old.Addr, m.Addr, outage.ErrDataLost)
	}
	return nil
}

// nodeFailed reports whether the cluster (as the node CLUSTER NODES reaches sees it) has
// flagged node id failed (fail, or fail? while the failure is not agreed), or forgot it.
func nodeFailed(ctx context.Context, cc *redis.ClusterClient, id string) (bool, error) {
	out, err := cc.ClusterNodes(ctx).Result()
	if err != nil {
		return false, wrap("cluster nodes", err)
	}
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != id {
			continue
		}
		return slices.ContainsFunc(strings.Split(f[2], ","), func(flag string) bool {
			return flag == "fail" || flag == "fail?" || flag == "noaddr"
		}), nil
	}
	return true, nil
}
