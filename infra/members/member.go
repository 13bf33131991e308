package members

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// NamePattern is what an executor name must match: it becomes part of a Redis key, so the
// same rule as a tenant id.
var NamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// DefaultTTL is the liveness TTL when Options.TTL is not set (the default lease TTL).
const DefaultTTL = 60 * time.Second

// DefaultPruneAfter is how long after its last heartbeat a dead executor's entry is kept.
const DefaultPruneAfter = time.Hour

// ErrNameInUse is Start's error when a live executor already has the name.
var ErrNameInUse = errors.New("members: executor name in use")

// Member is one executor as the registry knows it.
type Member struct {
	Name      string
	Address   string // where its HTTP API listens, as it reported it
	Version   string // its build's version; "" when unknown
	StartedAt time.Time
	// LastHeartbeat is the time of its last refresh, by its own clock.
	LastHeartbeat time.Time
	// Runs is how many tasks it was running at its last heartbeat (every TTL/3). Listed by the
	// executor itself: how many it runs now.
	Runs int
	// Alive reports whether its liveness key exists: it refreshed it within the TTL and did
	// not stop.
	Alive bool
	// Topology is how it was started (Options.Topology): "shared", "alone", or "" when it
	// did not say (an executor of an earlier version).
	Topology string
	// Kinds are the stage kinds it can run (Options.Kinds), sorted; nil when it did not say
	// (an executor of an earlier version).
	Kinds []string
}

// Options configure a registry.
type Options struct {
	Name    string // this executor's name; required, see CheckName
	Address string // where this executor's HTTP API listens
	Version string // this executor's version; "" when unknown
	// Prefix is the Redis key prefix; "" means rediskey.DefaultPrefix.
	Prefix string
	// TTL is the liveness key's TTL, refreshed every TTL/3; default DefaultTTL.
	TTL time.Duration
	// PruneAfter is how long after its last heartbeat List keeps the entry of an executor
	// that is not alive; default DefaultPruneAfter.
	PruneAfter time.Duration
	// Runs reports how many tasks this executor runs right now; nil reports 0.
	Runs   func() int
	Logger *slog.Logger // default slog.Default()
	// Topology is this executor's: TopologyShared or TopologyAlone (server.Topology's
	// values). Start refuses an executor alone on a Redis where another live executor is
	// registered, and a shared one on a Redis where a live executor runs alone
	// (ErrTopology).
	Topology string
	// Kinds are the stage kinds this executor can run, advertised to the others: a plan is
	// accepted when some live executor can run its kinds, and an executor claims no task of
	// a kind it lacks.
	Kinds []string
}

// The topologies Options.Topology names.
const (
	TopologyShared = "shared"
	TopologyAlone  = "alone"
)

// ErrTopology is Start's error when this executor's topology and another live executor's
// registration cannot both hold: an executor alone on its Redis must be the only one.
var ErrTopology = errors.New("members: topology conflict")

func (o Options) withDefaults() Options {
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.PruneAfter <= 0 {
		o.PruneAfter = DefaultPruneAfter
	}
	if o.Runs == nil {
		o.Runs = func() int { return 0 }
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// CheckName returns an error when name cannot name an executor.
func CheckName(name string) error {
	if !NamePattern.MatchString(name) {
		return fmt.Errorf("members: invalid executor name %q: must match %s", name, NamePattern)
	}
	return nil
}

// DefaultName is the name of an executor not given one: "<hostname>-<pid>", with what the
// hostname holds beyond NamePattern replaced by "-" and cut to fit; "executor-<pid>" when
// the hostname is unknown.
func DefaultName() string {
	pid := "-" + strconv.Itoa(os.Getpid())
	host, err := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if r < 0x80 && (r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z') {
			return r
		}
		return '-'
	}, host)
	if room := 128 - len(pid); len(host) > room {
		host = host[:room]
	}
	if err != nil || host == "" || !NamePattern.MatchString(host+pid) {
		return "executor" + pid
	}
	return host + pid
}
