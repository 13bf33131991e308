// Package redisconn builds the executor's Redis client from `serve --redis`: one node, a
// Redis Cluster, or a master watched by Sentinel, each as a redis.UniversalClient tuned the
// same way (short timeouts, one retry: a Redis that does not answer makes the executor go
// degraded within about a second instead of stalling its runs).
//
// The URL forms (docs/redis.md):
//
//   - one node: redis://[user:pass@]host:port/db, rediss:// for TLS (go-redis's ParseURL);
//   - Cluster: redis://[user:pass@]host1:p1?addr=host2:p2&addr=host3:p3 (go-redis's
//     ParseClusterURL), or a single seed node with Config.Cluster (--redis-cluster);
//   - Sentinel: redis+sentinel://[user:pass@]s1:26379,s2:26379,s3:26379/<master>[/db]
//     (rediss+sentinel:// for TLS), where user:pass are the master's credentials and the
//     query parameters sentinel_username and sentinel_password the sentinels'; or go-redis's
//     own form redis://[sentinel user:pass@]s1:26379?master_name=<master>&addr=s2:26379
//     (ParseFailoverURL), whose userinfo is the sentinels' and password= the master's.
package redisconn

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Mode is the kind of deployment a URL names.
type Mode string

// Modes.
const (
	Single   Mode = "single"
	Cluster  Mode = "cluster"
	Sentinel Mode = "sentinel"
)

// Timeout bounds every dial, read and write and the wait for a pooled connection.
const Timeout = time.Second

// StateReload is how old a Redis Cluster client's slot map may get before a command reloads
// it (in the background): how soon, at most, the executor follows a replica promoted after its
// master died.
const StateReload = time.Second

// ErrClusterNode is returned by Check when a URL of one node names a node of a Redis
// Cluster.
var ErrClusterNode = errors.New("redisconn: this Redis is a node of a Redis Cluster")

// ErrURL is wrapped by every error about the URL itself.
var ErrURL = errors.New("redisconn: invalid --redis URL")

// Config names the Redis to connect to.
type Config struct {
	URL     string // one of the forms of the package doc
	Cluster bool   // the URL names one seed node of a Redis Cluster (--redis-cluster)
	// MasterChanged is wrapped into the error of the first connection to a new master
	// (Sentinel), besides ErrMasterChanged: the executor passes outage.ErrDataLost.
	MasterChanged error
	// Timeout bounds every dial, read and write and the wait for a pooled connection;
	// 0 means Timeout (the package's constant).
	Timeout time.Duration
	// Warm is how many connections per master Warm opens and readies; the pool then never
	// closes a connection for being idle (go-redis's ConnMaxIdleTime off), so that they stay
	// ready. 0: none, and idle connections are closed after go-redis's default 30 minutes.
	Warm int
}

// noMaintNotifications turns go-redis's maintenance notifications off. With DisableIdentity
// (no CLIENT SETINFO), a new connection costs one round trip (HELLO) before its first command
// instead of three: on a slow link (seconds of latency) that is what a command that timed out,
// and so lost its connection, waits for on the next one.
func noMaintNotifications() *maintnotifications.Config {
	return &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
}

// timeout is cfg.Timeout, or the package's Timeout.
func (cfg Config) timeout() time.Duration {
	if cfg.Timeout > 0 {
		return cfg.Timeout
	}
	return Timeout
}

// Conn is an opened client and what it connects to.
type Conn struct {
	Client redis.UniversalClient
	Mode   Mode
	Addrs  []string // the addresses the URL names (the seeds, or the sentinels)
	Master string   // Sentinel: the master's name

	watch *masterWatch // Sentinel: notices a switch of master
	warm  int          // Config.Warm
}

// Open builds the client the URL names; it does not connect (the first command does).
func Open(cfg Config) (*Conn, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		// url.Parse's error quotes the whole URL, password included: only its reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w (not shown: it may hold a password): %w", ErrURL, err)
	}
	switch {
	case u.Scheme == "redis+sentinel" || u.Scheme == "rediss+sentinel":
		if cfg.Cluster {
			return nil, fmt.Errorf("%w: --redis-cluster with a Sentinel URL", ErrURL)
		}
		goURL, err := sentinelToGoRedis(u)
		if err != nil {
			return nil, err
		}
		return openSentinel(goURL, cfg.MasterChanged, cfg.timeout(), cfg.Warm)
	case u.Query().Has("master_name"):
		if cfg.Cluster {
			return nil, fmt.Errorf("%w: --redis-cluster with a Sentinel URL (master_name)", ErrURL)
		}
		return openSentinel(cfg.URL, cfg.MasterChanged, cfg.timeout(), cfg.Warm)
	case cfg.Cluster || u.Query().Has("addr"):
		return openCluster(u, cfg.URL, cfg.timeout(), cfg.Warm)
	default:
		o, err := redis.ParseURL(cfg.URL)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrURL, err)
		}
		d := cfg.timeout()
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = d, d, d, d
		o.MaxRetries, o.DialerRetries = 1, 1 // go-redis re-dials a refused connection 5 times by default
		o.DisableIdentity, o.MaintNotificationsConfig = true, noMaintNotifications()
		o.ConnMaxIdleTime = keepIdle(cfg.Warm, o.ConnMaxIdleTime)
		return &Conn{Client: redis.NewClient(o), Mode: Single, Addrs: []string{o.Addr}, warm: cfg.Warm}, nil
	}
}

func openCluster(u *url.URL, raw string, d time.Duration, warm int) (*Conn, error) {
	if db := strings.Trim(u.Path, "/"); db != "" && db != "0" {
		return nil, fmt.Errorf("%w: a Redis Cluster has database 0 only, not %q", ErrURL, db)
	}
	o, err := redis.ParseClusterURL(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrURL, err)
	}
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = d, d, d, d
	o.MaxRetries, o.DialerRetries = 1, 1
	o.DisableIdentity, o.MaintNotificationsConfig = true, noMaintNotifications()
	o.ConnMaxIdleTime = keepIdle(warm, o.ConnMaxIdleTime)
	// go-redis reloads the slot map on MOVED, ASK and READONLY, but not when a master stops
	// answering: without a reload it would dial the dead master until the next periodic one
	// (60 s by default), though its replica took over within the cluster's node timeout. One
	// CLUSTER SLOTS a second, asked in the background when a command finds the map older.
	o.ClusterStateReloadInterval = StateReload
	// MOVED, ASK, TRYAGAIN and CLUSTERDOWN are followed up to MaxRedirects times (go-redis's
	// default 3), with its backoff between tries: a failover longer than that is an outage
	// (the executor runs on memory until the cluster answers again).
	return &Conn{Client: redis.NewClusterClient(o), Mode: Cluster, Addrs: o.Addrs, warm: warm}, nil
}

func openSentinel(raw string, changed error, d time.Duration, warm int) (*Conn, error) {
	o, err := redis.ParseFailoverURL(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrURL, err)
	}
	if o.MasterName == "" {
		return nil, fmt.Errorf("%w: a Sentinel URL names the master (redis+sentinel://host:26379/<master>)", ErrURL)
	}
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = d, d, d, d
	o.MaxRetries, o.DialerRetries = 1, 1
	o.DisableIdentity = true
	o.ConnMaxIdleTime = keepIdle(warm, o.ConnMaxIdleTime)
	if changed == nil {
		changed = ErrMasterChanged
	}
	w := &masterWatch{wrap: changed}
	client := redis.NewFailoverClient(o)
	client.AddHook(w)
	return &Conn{Client: client, Mode: Sentinel, Addrs: o.SentinelAddrs, Master: o.MasterName, watch: w, warm: warm}, nil
}

// sentinelToGoRedis turns redis+sentinel://[user:pass@]s1:p1,s2:p2/<master>[/db]?… into
// go-redis's failover URL: redis://[sentinel creds@]s1:p1?master_name=<master>&addr=s2:p2&
// username=&password=&db=….
func sentinelToGoRedis(u *url.URL) (string, error) {
	hosts := strings.Split(u.Host, ",")
	if u.Host == "" || len(hosts) == 0 {
		return "", fmt.Errorf("%w: a Sentinel URL names at least one sentinel (redis+sentinel://host:26379/<master>)", ErrURL)
	}
	path := strings.FieldsFunc(u.Path, func(r rune) bool { return r == '/' })
	if len(path) == 0 || len(path) > 2 {
		return "", fmt.Errorf("%w: a Sentinel URL's path is /<master> or /<master>/<db>, not %q", ErrURL, u.Path)
	}
	q := u.Query()
	out := url.Values{}
	for k, v := range q {
		if k == "sentinel_username" || k == "sentinel_password" || k == "master_name" || k == "addr" {
			continue
		}
		out[k] = v
	}
	out.Set("master_name", path[0])
	if len(path) == 2 {
		out.Set("db", path[1])
	}
	for _, h := range hosts[1:] {
		if h == "" {
			return "", fmt.Errorf("%w: an empty sentinel address in %q", ErrURL, u.Host)
		}
		out.Add("addr", withPort(h))
	}
	if u.User != nil {
		if name := u.User.Username(); name != "" {
			out.Set("username", name)
		}
		if pw, ok := u.User.Password(); ok {
			out.Set("password", pw)
		}
	}
	goURL := url.URL{Scheme: strings.TrimSuffix(u.Scheme, "+sentinel"), Host: withPort(hosts[0]), RawQuery: out.Encode()}
	if q.Has("sentinel_username") || q.Has("sentinel_password") {
		goURL.User = url.UserPassword(q.Get("sentinel_username"), q.Get("sentinel_password"))
	}
	return goURL.String(), nil
}

// withPort adds Sentinel's default port to a host without one.
func withPort(h string) string {
	if strings.Contains(h, ":") && !strings.HasSuffix(h, "]") {
		return h
	}
	return h + ":26379"
}

// Check refuses a configuration that would fail on its first write, and that no change on
// Redis's side can fix: a node of a Redis Cluster given as one node (every command of another
// node's slot would answer MOVED). A Redis that does not answer is not refused here: the
// executor starts, not ready until it reaches Redis. Nor is a Redis that refuses the executor
// (its password, its ACL user's permissions, a command, its TLS certificate): Access checks
// that, and the executor starts not ready, naming what is refused, until Redis grants it.
func Check(ctx context.Context, c *Conn) error {
	if c.Mode != Single {
		return nil
	}
	info, err := c.Client.Info(ctx, "cluster").Result()
	if err != nil || !strings.Contains(info, "cluster_enabled:1") {
		return nil // unreachable or not a cluster node: nothing to refuse
	}
	addr := c.Addrs[0]
	return fmt.Errorf("%w: %s; write --redis 'redis://%s?addr=<another node>&addr=<…>' (go-redis's cluster URL) or add --redis-cluster",
		ErrClusterNode, addr, addr)
}

// Advice returns how to narrow, as the Redis is configured, the writes a failover can take
// from the executor ("" when nothing is known, or it cannot tell). On Sentinel: a failover the
// sentinels start while the master lives (SENTINEL FAILOVER, or a master cut off from them)
// promotes a replica while the old master still takes writes, until the sentinels turn it into
// a replica of the new one, which discards them. The executor notices the switch of master
// and writes back what it holds (ErrMasterChanged); what it does not hold (the writes of an
// executor that died meanwhile) is lost. A master configured with min-replicas-to-write equal
// to its number of replicas refuses those writes (NOREPLICAS) instead.
func Advice(ctx context.Context, c *Conn) string {
	if c.Mode != Sentinel {
		return ""
	}
	info, err := c.Client.Info(ctx, "replication").Result()
	if err != nil {
		return ""
	}
	replicas := infoInt(info, "connected_slaves")
	cfg, err := c.Client.ConfigGet(ctx, "min-replicas-to-write").Result()
	if err != nil {
		return "" // CONFIG is often disabled on managed Redis: nothing to tell
	}
	want, _ := strconv.Atoi(cfg["min-replicas-to-write"])
	if replicas == 0 || want >= replicas {
		return ""
	}
	return fmt.Sprintf("redis: the master has %d replicas and min-replicas-to-write %d: a failover the sentinels make while it lives "+
		"(SENTINEL FAILOVER, a network partition) discards the writes it took meanwhile; the executors write back what they hold, "+
		"min-replicas-to-write %d makes the master refuse them instead (docs/redis.md#failover)",
		replicas, want, replicas)
}

// infoInt returns the integer field name of an INFO reply (0 when absent).
func infoInt(info, name string) int {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// Redact returns the URL with its passwords (userinfo and password parameters) masked, for
// logs and reports.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparsable URL>"
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	q := u.Query()
	for _, k := range []string{"password", "sentinel_password"} {
		if q.Has(k) {
			q.Set(k, "xxxxx")
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}
