package redistest

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// SentinelMaster is the master name the Sentinels of StartSentinels monitor.
const SentinelMaster = "mymaster"

// Sentinels is a master, its replicas and the sentinels that watch them, all real
// redis-server processes owned by a test. The sentinels declare the master down 1 s after it
// stops answering and fail over to a replica (a quorum of 2).
type Sentinels struct {
	t         testing.TB
	data      []*Server // the master as started, then its replicas
	sentinels []*Server
}

// StartSentinels starts a master with replicas and n sentinels (n ≥ 2), waits until every
// sentinel knows the master, its replicas and the other sentinels, and stops them all when the
// test ends. opts configure the master and the replicas.
func StartSentinels(t testing.TB, replicas, n int, opts ...Option) *Sentinels {
	t.Helper()
	s := &Sentinels{t: t}
	data := append([]Option{Args("--repl-diskless-sync-delay", "0")}, opts...)
	master := Start(t, data...)
	s.data = append(s.data, master)
	for range replicas {
		s.data = append(s.data, Start(t, append(data, Args("--replicaof", "127.0.0.1", strconv.Itoa(master.Port())))...))
	}
	conf := fmt.Sprintf("sentinel resolve-hostnames no\n"+
		"sentinel monitor %[1]s 127.0.0.1 %[2]d 2\n"+
		"sentinel down-after-milliseconds %[1]s 1000\n"+
		"sentinel failover-timeout %[1]s 3000\n"+
		"sentinel parallel-syncs %[1]s 1\n", SentinelMaster, master.Port())
	for range n {
		s.sentinels = append(s.sentinels, Start(t, Config(conf), Args("--sentinel")))
	}
	s.waitSettled(master, replicas, n)
	return s
}

// URL returns the executor's Sentinel URL: redis+sentinel://<every sentinel>/mymaster.
func (s *Sentinels) URL() string {
	addrs := make([]string, len(s.sentinels))
	for i, n := range s.sentinels {
		addrs[i] = n.Addr()
	}
	return "redis+sentinel://" + strings.Join(addrs, ",") + "/" + SentinelMaster
}

// SentinelServers returns the sentinels.
func (s *Sentinels) SentinelServers() []*Server { return s.sentinels }

// Master returns the server the sentinels name as master now.
func (s *Sentinels) Master() *Server {
	s.t.Helper()
	addr := s.masterAddr()
	for _, n := range s.data {
		if n.Addr() == addr {
			return n
		}
	}
	s.t.Fatalf("redistest: the sentinels name %q, not a server of this set", addr)
	return nil
}

// Failover asks a sentinel to fail over (SENTINEL FAILOVER: a replica is promoted without
// the master being down) and waits until the new master is writable and every sentinel
// names it. It returns the new master.
func (s *Sentinels) Failover() *Server {
	s.t.Helper()
	old := s.masterAddr()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.sentinels[0].admin().Do(ctx, "SENTINEL", "FAILOVER", SentinelMaster).Err(); err != nil {
		s.t.Fatalf("redistest: sentinel failover: %v", err)
	}
	return s.WaitNewMaster(old)
}

// WaitNewMaster waits until every sentinel names a master other than old (host:port) and that
// master answers as one, and returns it.
func (s *Sentinels) WaitNewMaster(old string) *Server {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := s.agreed(); m != "" && m != old {
			for _, n := range s.data {
				if n.Addr() == m && s.isMaster(n) {
					return n
				}
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redistest: the sentinels did not fail over from %s within 30s", old)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// agreed returns the master every running sentinel names, or "".
func (s *Sentinels) agreed() string {
	var m string
	for _, sn := range s.sentinels {
		if !sn.running() {
			continue
		}
		a := s.askMaster(sn)
		if a == "" || (m != "" && a != m) {
			return ""
		}
		m = a
	}
	return m
}

func (s *Sentinels) masterAddr() string {
	s.t.Helper()
	for _, sn := range s.sentinels {
		if a := s.askMaster(sn); a != "" {
			return a
		}
	}
	s.t.Fatalf("redistest: no sentinel names a master")
	return ""
}

func (s *Sentinels) askMaster(sn *Server) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	v, err := sn.admin().Do(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", SentinelMaster).StringSlice()
	if err != nil || len(v) != 2 {
		return ""
	}
	return net.JoinHostPort(v[0], v[1])
}

func (s *Sentinels) isMaster(n *Server) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	info, err := n.admin().Info(ctx, "replication").Result()
	return err == nil && strings.Contains(info, "role:master")
}

// waitSettled waits until every sentinel knows the master, its replicas (in sync) and the
// other sentinels: before that a failover could not happen.
func (s *Sentinels) waitSettled(master *Server, replicas, n int) {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		why := s.unsettled(master, replicas, n)
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redistest: sentinels not settled after 30s: %s", why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *Sentinels) unsettled(master *Server, replicas, n int) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, r := range s.data[1:] {
		info, err := r.admin().Info(ctx, "replication").Result()
		if err != nil || !strings.Contains(info, "master_link_status:up") {
			return fmt.Sprintf("%s not in sync", r)
		}
	}
	for _, sn := range s.sentinels {
		m, err := sn.admin().Do(ctx, "SENTINEL", "MASTER", SentinelMaster).Slice()
		if err != nil {
			return fmt.Sprintf("%s: %v", sn, err)
		}
		f := fields(m)
		if f["port"] != strconv.Itoa(master.Port()) {
			return fmt.Sprintf("%s names %s:%s", sn, f["ip"], f["port"])
		}
		if f["num-slaves"] != strconv.Itoa(replicas) || f["num-other-sentinels"] != strconv.Itoa(n-1) {
			return fmt.Sprintf("%s knows %s replicas and %s other sentinels", sn, f["num-slaves"], f["num-other-sentinels"])
		}
	}
	return ""
}

// fields turns a flat name, value, … reply into a map.
func fields(flat []any) map[string]string {
	out := make(map[string]string, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		out[fmt.Sprint(flat[i])] = fmt.Sprint(flat[i+1])
	}
	return out
}
