package redistest

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterSlots is the number of hash slots of a Redis Cluster.
const clusterSlots = 16384

// Cluster is a Redis Cluster of real redis-server processes owned by a test: masters that
// share the 16,384 hash slots, each with its replicas. A node's Server can be stopped,
// killed, frozen and restarted like any other (it keeps its node id and slots in its
// nodes.conf, and restarts empty: nothing is persisted).
type Cluster struct {
	t     testing.TB
	nodes []*Server
}

// clusterArgs are the redis-server arguments of a cluster node: a short node timeout, so that
// a master killed is replaced by its replica within about two seconds, and replicas that sync
// at once (no diskless-sync delay).
func clusterArgs() Option {
	return Args("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", "1000", "--repl-diskless-sync-delay", "0",
		"--cluster-replica-validity-factor", "0")
}

// StartCluster starts masters×(1+replicas) redis-server processes on free ports, joins them
// into one cluster (slots split evenly over the masters, in order; node i+masters·k replicates
// master i), waits until every node reports the cluster ok and every replica is in sync, and
// stops them all when the test ends.
func StartCluster(t testing.TB, masters, replicas int) *Cluster {
	t.Helper()
	c := &Cluster{t: t}
	for range masters * (1 + replicas) {
		c.nodes = append(c.nodes, Start(t, clusterArgs()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first := c.nodes[0]
	for _, n := range c.nodes[1:] {
		if err := n.admin().ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(first.port)).Err(); err != nil {
			t.Fatalf("redistest: cluster meet: %v", err)
		}
	}
	per := clusterSlots / masters
	for i := range masters {
		lo, hi := i*per, (i+1)*per-1
		if i == masters-1 {
			hi = clusterSlots - 1
		}
		if err := c.nodes[i].admin().ClusterAddSlotsRange(ctx, lo, hi).Err(); err != nil {
			t.Fatalf("redistest: cluster addslots: %v", err)
		}
	}
	c.waitKnown(ctx)
	for i := masters; i < len(c.nodes); i++ {
		master := c.id(ctx, c.nodes[i%masters])
		if err := c.nodes[i].admin().ClusterReplicate(ctx, master).Err(); err != nil {
			t.Fatalf("redistest: cluster replicate: %v", err)
		}
	}
	c.WaitHealthy()
	return c
}

// SeedURL returns a redis:// URL of one node (for --redis with --redis-cluster).
func (c *Cluster) SeedURL() string { return "redis://" + c.nodes[0].Addr() }

// URL returns go-redis's cluster URL: the first node, and every other one as an addr=
// parameter.
func (c *Cluster) URL() string {
	var b strings.Builder
	b.WriteString("redis://" + c.nodes[0].Addr())
	for i, n := range c.nodes[1:] {
		if i == 0 {
			b.WriteString("?")
		} else {
			b.WriteString("&")
		}
		b.WriteString("addr=" + n.Addr())
	}
	return b.String()
}

// Client returns a cluster client, closed when the test ends.
func (c *Cluster) Client() *redis.ClusterClient {
	addrs := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = n.Addr()
	}
	// The slot map reloads once a second old, as the executor's own client does
	// (redisconn.StateReload): go-redis does not reload it when a master dies, so a client
	// with its default (a minute) keeps dialling a killed master after its replica took over.
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ClusterStateReloadInterval: time.Second})
	c.t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// Masters returns the servers that are masters now (as the cluster sees them), by port.
func (c *Cluster) Masters() []*Server {
	c.t.Helper()
	var out []*Server
	for _, n := range c.nodes {
		if c.role(n) == "master" {
			out = append(out, n)
		}
	}
	return out
}

// MasterOf returns the server that is master of key's slot now.
func (c *Cluster) MasterOf(key string) *Server {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cl := c.Client()
	defer cl.Close()
	m, err := cl.MasterForKey(ctx, key)
	if err != nil {
		c.t.Fatalf("redistest: master for %q: %v", key, err)
	}
	addr := m.Options().Addr
	for _, n := range c.nodes {
		if n.Addr() == addr {
			return n
		}
	}
	c.t.Fatalf("redistest: master %s of %q is not a node of this cluster", addr, key)
	return nil
}

// ReplicaOf returns a running replica of master.
func (c *Cluster) ReplicaOf(master *Server) *Server {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	id := c.id(ctx, master)
	for _, n := range c.nodes {
		if n == master || !n.running() {
			continue
		}
		info, err := n.admin().Info(ctx, "replication").Result()
		if err == nil && strings.Contains(info, "role:slave") && c.replicates(ctx, n) == id {
			return n
		}
	}
	c.t.Fatalf("redistest: %s has no running replica", master)
	return nil
}

// Failover makes a replica of master take its place with CLUSTER FAILOVER (the coordinated
// failover: the replica catches up first, nothing acknowledged is lost) and waits until the
// cluster is healthy again. It returns the new master.
func (c *Cluster) Failover(master *Server) *Server {
	c.t.Helper()
	replica := c.ReplicaOf(master)
	// A manual failover is aborted when it does not complete within five seconds (Redis's
	// CLUSTER_MF_TIMEOUT), which a loaded machine can make happen: it is asked again.
	for try := 1; ; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := replica.admin().ClusterFailover(ctx).Err()
		cancel()
		if err != nil {
			c.t.Fatalf("redistest: cluster failover on %s: %v", replica, err)
		}
		if c.becomes(replica, "master", 10*time.Second) {
			break
		}
		if try == 4 {
			c.t.Fatalf("redistest: %s did not become master after %d manual failovers", replica, try)
		}
	}
	c.WaitHealthy()
	return replica
}

// WaitHealthy waits until every running node reports the cluster ok, knows every slot's
// master, agrees with the others on which master serves each slot (after a failover, gossip
// takes a moment to reach every node), and every running replica's link to its master is up.
func (c *Cluster) WaitHealthy() {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		why := c.unhealthy()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("redistest: cluster not healthy after 30s: %s", why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *Cluster) unhealthy() string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	slotMap := "" // the first running node's slot ranges and their masters: every node must agree
	for _, n := range c.nodes {
		if !n.running() {
			continue
		}
		cl := n.admin()
		info, err := cl.ClusterInfo(ctx).Result()
		if err != nil {
			return fmt.Sprintf("%s: %v", n, err)
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return fmt.Sprintf("%s: cluster state not ok", n)
		}
		repl, err := cl.Info(ctx, "replication").Result()
		if err != nil {
			return fmt.Sprintf("%s: %v", n, err)
		}
		if strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
			return fmt.Sprintf("%s: replica not in sync", n)
		}
		if strings.Contains(repl, "role:slave") && strings.Contains(repl, "master_sync_in_progress:1") {
			return fmt.Sprintf("%s: replica syncing", n)
		}
		//lint:ignore SA1019 CLUSTER SLOTS gives the slot ranges and their masters in one answer, as wanted here
		slots, err := cl.ClusterSlots(ctx).Result()
		if err != nil {
			return fmt.Sprintf("%s: %v", n, err)
		}
		ranges := make([]string, 0, len(slots))
		for _, s := range slots {
			if len(s.Nodes) > 0 {
				ranges = append(ranges, fmt.Sprintf("%d-%d:%s", s.Start, s.End, s.Nodes[0].Addr))
			}
		}
		sort.Strings(ranges)
		switch m := strings.Join(ranges, ","); {
		case slotMap == "":
			slotMap = m
		case m != slotMap:
			return fmt.Sprintf("%s: its slot map (%s) is not the others' (%s) yet", n, m, slotMap)
		}
	}
	return ""
}

// waitKnown waits until every node knows every other one.
func (c *Cluster) waitKnown(ctx context.Context) {
	c.t.Helper()
	for _, n := range c.nodes {
		for {
			out, err := n.admin().ClusterNodes(ctx).Result()
			if err == nil && strings.Count(strings.TrimSpace(out), "\n")+1 == len(c.nodes) &&
				!strings.Contains(out, "handshake") {
				break
			}
			if ctx.Err() != nil {
				c.t.Fatalf("redistest: cluster nodes did not meet: %v", ctx.Err())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// becomes reports whether n takes role within d.
func (c *Cluster) becomes(n *Server, role string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for c.role(n) != role {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

func (c *Cluster) role(n *Server) string {
	if !n.running() {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	info, err := n.admin().Info(ctx, "replication").Result()
	switch {
	case err != nil:
		return ""
	case strings.Contains(info, "role:master"):
		return "master"
	default:
		return "replica"
	}
}

func (c *Cluster) id(ctx context.Context, n *Server) string {
	c.t.Helper()
	id, err := n.admin().ClusterMyID(ctx).Result()
	if err != nil {
		c.t.Fatalf("redistest: cluster myid of %s: %v", n, err)
	}
	return id
}

// replicates returns the node id that n replicates ("" for a master).
func (c *Cluster) replicates(ctx context.Context, n *Server) string {
	out, err := n.admin().ClusterNodes(ctx).Result()
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 3 && strings.Contains(f[2], "myself") {
			if f[3] == "-" {
				return ""
			}
			return f[3]
		}
	}
	return ""
}
