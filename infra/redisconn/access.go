package redisconn

import (
	"context"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrDenied is matched by the error of a check (Access.Check, CheckAccess) when Redis refuses
// the executor something it needs: a password (NOAUTH, WRONGPASS), a command, key or channel of its ACL user (NOPERM), a
// command renamed or disabled, or its TLS certificate is not trusted. Only a change of
// configuration ends it: the executor is not ready meanwhile.
var ErrDenied = errors.New("redisconn: redis refuses what the executor needs")

// NeedsDoc is where docs/redis.md says what the executor needs from Redis, named by every
// ErrDenied error.
const NeedsDoc = "docs/redis.md#what-the-executor-needs-from-redis"

// probeTTL bounds the life of the probe key should a check stop half-way.
const probeTTL = 30 * time.Second

// Needs is what the executor uses on its Redis, as CheckAccess checks it.
type Needs struct {
	Prefix   string   // every key and channel of the executor starts with it ("executor:")
	Probe    string   // a key under Prefix that the checks may write and delete (one per process)
	Stream   string   // the events stream (XADD, XREAD, XRANGE, XREVRANGE)
	Channels []string // the pub/sub channels the executor PUBLISHes and SUBSCRIBEs to
}

// probe is one thing the executor needs: a command, and the key or channel it acts on.
type probe struct {
	args    []any  // the command line, for ACL DRYRUN and the real probe
	key     string // the key it acts on ("" when none)
	channel string // the channel it acts on ("" when none)
}

// name is the command as the error names it: "PUBLISH", "SCRIPT LOAD".
func (p probe) name() string {
	name := strings.ToUpper(fmt.Sprint(p.args[0]))
	switch name {
	case "SCRIPT", "CLIENT", "ACL":
		name += " " + strings.ToUpper(fmt.Sprint(p.args[1]))
	}
	return name
}

// returnOne is the script the checks run.
const returnOne = "return 1"

// scriptSHA is returnOne's id (EVALSHA, SCRIPT EXISTS).
func scriptSHA() string {
	sum := sha1.Sum([]byte(returnOne)) // Redis names a script by its SHA-1
	return hex.EncodeToString(sum[:])
}

// keyProbes are the key commands the executor sends (the go-redis calls and the Lua scripts
// of infra/*), on key k, in an order that a real run can follow: each type's key is written,
// read, and deleted before the next type, and holds a TTL while it exists.
func keyProbes(k string) []probe {
	ttl := int64(probeTTL / time.Millisecond)
	cmds := [][]any{
		{"SET", k, "probe", "PX", ttl}, {"GET", k}, {"GETRANGE", k, 0, 0}, {"PERSIST", k}, {"PEXPIRE", k, ttl},
		{"EXPIRE", k, int64(probeTTL / time.Second)}, {"PTTL", k}, {"EXISTS", k}, {"GETDEL", k},
		{"HSET", k, "f", 1}, {"PEXPIRE", k, ttl}, {"HGET", k, "f"}, {"HMGET", k, "f"}, {"HGETALL", k}, {"HEXISTS", k, "f"},
		{"HINCRBY", k, "f", 1}, {"HLEN", k}, {"HDEL", k, "f"},
		{"ZADD", k, 0, "m"}, {"PEXPIRE", k, ttl}, {"ZSCORE", k, "m"}, {"ZRANGE", k, 0, -1}, {"ZREVRANGE", k, 0, -1}, {"ZREVRANK", k, "m"},
		{"ZRANGEBYSCORE", k, "-inf", "+inf"}, {"ZREVRANGEBYSCORE", k, "+inf", "-inf"}, {"ZCARD", k}, {"ZREM", k, "m"}, {"ZPOPMIN", k},
		{"SADD", k, "m"}, {"PEXPIRE", k, ttl}, {"SMEMBERS", k}, {"SRANDMEMBER", k, 1}, {"SREM", k, "m"},
		{"XADD", k, "*", "f", "v"}, {"PEXPIRE", k, ttl}, {"XLEN", k}, {"XRANGE", k, "-", "+", "COUNT", 1}, {"XREVRANGE", k, "+", "-", "COUNT", 1},
		{"XDEL", k, "0-1"},
		{"XREAD", "COUNT", 1, "STREAMS", k, "0"}, {"DEL", k},
	}
	out := make([]probe, len(cmds))
	for i, c := range cmds {
		out[i] = probe{args: c, key: k}
	}
	return out
}

// needs lists what the executor needs of Redis (docs/redis.md, "What the executor needs from
// Redis"). dry: for ACL DRYRUN, which writes nothing: XADD is checked on the events stream
// itself (a real probe adds to the probe key instead: the stream's readers would get it).
func needs(n Needs, dry bool) []probe {
	sha := scriptSHA()
	list := []probe{{args: []any{"PING"}}, {args: []any{"TIME"}}, {args: []any{"CLIENT", "ID"}}}
	list = append(list, keyProbes(n.Probe)...)
	if dry {
		list = append(list, probe{args: []any{"XADD", n.Stream, "*", "f", "v"}, key: n.Stream})
	}
	list = append(list,
		probe{args: []any{"XREVRANGE", n.Stream, "+", "-", "COUNT", 1}, key: n.Stream},
		probe{args: []any{"EVAL", returnOne, 0}},
		probe{args: []any{"SCRIPT", "LOAD", returnOne}},
		probe{args: []any{"EVALSHA", sha, 0}},
		probe{args: []any{"SCRIPT", "EXISTS", sha}},
	)
	if dry {
		list = append(list, probe{args: []any{"MULTI"}}, probe{args: []any{"EXEC"}})
	}
	for _, ch := range n.Channels {
		list = append(list, probe{args: []any{"PUBLISH", ch, "probe"}, channel: ch})
	}
	if dry {
		for _, ch := range n.Channels {
			list = append(list, probe{args: []any{"SUBSCRIBE", ch}, channel: ch})
		}
	}
	return list
}

// CheckAccess checks once what Redis grants the executor: see Access.Check.
func CheckAccess(ctx context.Context, client redis.UniversalClient, n Needs) error {
	return NewAccess(client, n).Check(ctx)
}

// Access checks, again and again, what Redis grants the executor's client (Check). It
// remembers that the ACL user may not run ACL DRYRUN (the usual case: it is an administrative
// command), so that it asks once, not at every check: each refusal is an entry of Redis's
// ACL LOG.
type Access struct {
	client redis.UniversalClient
	needs  Needs
	probe  atomic.Bool // ACL DRYRUN is refused to the user, or unknown: run the probes
}

// NewAccess returns the checker of what client may do, as n says the executor needs.
func NewAccess(client redis.UniversalClient, n Needs) *Access {
	return &Access{client: client, needs: n}
}

// Check checks that Redis lets the executor do what it needs: read and write keys under its
// prefix, run scripts (EVAL, EVALSHA, SCRIPT LOAD), transactions, TIME, append to and read the
// events stream, PUBLISH and SUBSCRIBE on its channels. Where the ACL user may run ACL DRYRUN
// (Redis 7 and later), every command is checked so, without running it; else each is run: the
// key commands on a probe key under the prefix (Needs.Probe: written and deleted, with a TTL
// meanwhile), a PUBLISH of "probe" on each channel (which the executors ignore), and a
// subscription to each channel.
//
// A refusal returns an error matching ErrDenied (and wrapping the reply, when there is one)
// that names what is refused and what to change, e.g. "redisconn: redis refuses what the
// executor needs: the ACL user cannot PUBLISH on channel executor:signals (NOPERM …); grant it
// &executor:* (docs/redis.md#…)". An error that does not match ErrDenied means that Redis
// could not be asked (it does not answer, it is loading: see outage.Is): nothing is known.
func (a *Access) Check(ctx context.Context) error {
	client, n := a.client, a.needs
	if a.probe.Load() {
		return probeAccess(ctx, client, n)
	}
	user, err := client.Do(ctx, "ACL", "WHOAMI").Text()
	switch {
	case err == nil:
		if dry, err := dryRun(ctx, client, n, user); dry {
			return err
		}
	case redis.IsPermissionError(err) || unknown(err):
		// The user may not ask (the usual ACL user), or the server has no ACL (Redis < 6).
	default:
		if d := deny(probe{args: []any{"ACL", "WHOAMI"}}, n, err); d != nil {
			return d // NOAUTH, WRONGPASS, a certificate not trusted: nothing else can be asked
		}
		return fmt.Errorf("redisconn: access check: %w", err)
	}
	a.probe.Store(true)
	return probeAccess(ctx, client, n)
}

// dryRun checks every need with ACL DRYRUN as user. dry is false when the server cannot (Redis
// < 7) or the user may not: the caller runs the probes then.
func dryRun(ctx context.Context, client redis.UniversalClient, n Needs, user string) (dry bool, err error) {
	list := needs(n, true)
	cmds, _ := client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, pr := range list {
			p.Do(ctx, append([]any{"ACL", "DRYRUN", user}, pr.args...)...)
		}
		return nil
	})
	if first := cmds[0].Err(); first != nil && (redis.IsPermissionError(first) || unknown(first)) {
		return false, nil
	}
	var other error
	for i, c := range cmds {
		reply, err := c.(*redis.Cmd).Text()
		switch {
		case err == nil && reply == "OK":
		case err == nil: // "This user has no permissions to run the 'eval' command"
			return true, permDenied(list[i], n, "NOPERM, says ACL DRYRUN: "+reply, nil)
		case redis.HasErrorPrefix(err, "Command '") && strings.Contains(err.Error(), "not found"):
			return true, unknownDenied(list[i], err)
		default:
			if d := deny(list[i], n, err); d != nil {
				return true, d
			}
			if isReply(err) {
				return false, nil // a reply ACL DRYRUN should not give (another version?): probe instead
			}
			if other == nil {
				other = fmt.Errorf("redisconn: access check: ACL DRYRUN %s: %w", list[i].name(), err)
			}
		}
	}
	return true, other
}

// probeAccess runs every need: the commands in one pipeline, a transaction, then a
// subscription to each channel.
func probeAccess(ctx context.Context, client redis.UniversalClient, n Needs) error {
	list := needs(n, false)
	cmds, _ := client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, pr := range list {
			p.Do(ctx, pr.args...)
		}
		return nil
	})
	var other error
	for i, c := range cmds {
		err := c.Err()
		if err == nil || errors.Is(err, redis.Nil) {
			continue
		}
		if d := deny(list[i], n, err); d != nil {
			return d
		}
		// Any other reply (NOSCRIPT: a Redis Cluster node that did not load the script, OOM,
		// LOADING, …) comes after Redis checked the password, the ACL and the command: granted.
		if other == nil && !isReply(err) {
			other = fmt.Errorf("redisconn: access check: %s: %w", list[i].name(), err)
		}
	}
	if other != nil {
		return other
	}
	if _, err := client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Exists(ctx, n.Probe)
		return nil
	}); err != nil {
		if d := deny(probe{args: []any{"MULTI"}}, n, err); d != nil {
			return d
		}
		if !isReply(err) {
			return fmt.Errorf("redisconn: access check: MULTI: %w", err)
		}
	}
	return subscribeAccess(ctx, client, n)
}

// subscribeAccess subscribes to each channel in turn, on one connection, then closes it.
func subscribeAccess(ctx context.Context, client redis.UniversalClient, n Needs) error {
	if len(n.Channels) == 0 {
		return nil
	}
	ps := client.Subscribe(ctx)
	defer ps.Close()
	for _, ch := range n.Channels {
		err := ps.Subscribe(ctx, ch)
		if err == nil {
			_, err = ps.ReceiveTimeout(ctx, Timeout) // the confirmation, or the refusal
		}
		if err != nil {
			if d := deny(probe{args: []any{"SUBSCRIBE", ch}, channel: ch}, n, err); d != nil {
				return d
			}
			if !isReply(err) {
				return fmt.Errorf("redisconn: access check: SUBSCRIBE %s: %w", ch, err)
			}
		}
	}
	return nil
}

// deny returns the ErrDenied error for err, the reply to pr, or nil when err is no refusal of
// the executor (no answer, or an answer about data).
func deny(pr probe, n Needs, err error) error {
	var (
		verify    *tls.CertificateVerificationError
		authority x509.UnknownAuthorityError
		invalid   x509.CertificateInvalidError
		host      x509.HostnameError
		record    tls.RecordHeaderError
	)
	switch {
	case redis.HasErrorPrefix(err, "NOAUTH "):
		return &deniedError{what: "redis asks for a password, and --redis gives none", reply: err,
			fix: "give it in the URL: redis://:<password>@host:port/db, or redis://<user>:<password>@… for an ACL user"}
	case redis.HasErrorPrefix(err, "WRONGPASS "):
		return &deniedError{what: "redis refuses the user and password --redis gives", reply: err,
			fix: "check them, and that the ACL user exists and is on"}
	case redis.IsPermissionError(err) || redis.HasErrorPrefix(err, "The user executing the script can't "):
		return permDenied(pr, n, err.Error(), err)
	case unknown(err) || redis.HasErrorPrefix(err, "Unknown Redis command called from script"):
		return unknownDenied(pr, err)
	case errors.As(err, &authority):
		return &deniedError{what: "the executor does not trust the TLS certificate of redis: its authority is unknown", reply: err,
			fix: "trust its CA: SSL_CERT_FILE=/path/to/ca.pem (or SSL_CERT_DIR) in the executor's environment"}
	case errors.As(err, &verify) || errors.As(err, &invalid) || errors.As(err, &host):
		return &deniedError{what: "the TLS certificate of redis is not valid for the executor", reply: err,
			fix: "give redis a current certificate for the host --redis names, signed by a CA the executor trusts"}
	case errors.As(err, &record):
		return &deniedError{what: "redis does not speak TLS on this port", reply: err,
			fix: "write redis:// (not rediss://), or name redis's TLS port"}
	}
	return nil
}

var (
	// namedBy finds the command a NOPERM reply names: "… to run the 'select' command".
	namedBy = regexp.MustCompile(`'([^']+)' command`)
	// quotes are the quoted names of a reply.
	quotes = regexp.MustCompile(`'[^']*'`)
	// unknownName finds the command an unknown-command reply names: "unknown command 'TIME'",
	// "Command 'TIME' not found".
	unknownName = regexp.MustCompile(`(?i)command '([^']+)'`)
)

// permDenied is the error of a NOPERM (text: the reply, or what ACL DRYRUN answered; reply:
// the reply, nil for ACL DRYRUN): what the ACL user may not do, and what to grant.
func permDenied(pr probe, n Needs, text string, reply error) error {
	low := strings.ToLower(quotes.ReplaceAllString(text, "''")) // not a key or channel's own name
	switch {
	case strings.Contains(low, "channel"):
		ch := pr.channel
		if ch == "" {
			ch = n.Prefix + "*"
		}
		return &deniedError{what: "the ACL user cannot " + pr.name() + " on channel " + ch, text: text, reply: reply,
			fix: "grant it &" + n.Prefix + "*"}
	case strings.Contains(low, "key"):
		k := pr.key
		if k == "" {
			k = n.Prefix + "*"
		}
		return &deniedError{what: "the ACL user cannot " + pr.name() + " on key " + k, text: text, reply: reply,
			fix: "grant it ~" + n.Prefix + "*"}
	}
	name := pr.name()
	if m := namedBy.FindStringSubmatch(text); m != nil {
		name = strings.ToUpper(strings.ReplaceAll(m[1], "|", " "))
	}
	return &deniedError{what: "the ACL user cannot run " + name, text: text, reply: reply,
		fix: "grant it +" + strings.ToLower(strings.ReplaceAll(name, " ", "|"))}
}

// unknownDenied is the error of a command the server does not know.
func unknownDenied(pr probe, reply error) error {
	name := pr.name()
	if m := unknownName.FindStringSubmatch(reply.Error()); m != nil {
		name = strings.ToUpper(m[1])
	}
	return &deniedError{what: "redis does not know the command " + name + ": it was renamed or disabled (rename-command)", reply: reply,
		fix: "the executor needs it under its own name"}
}

// deniedError is an ErrDenied error: what Redis refuses, its reply, and what to change.
type deniedError struct {
	what  string // what is refused: "the ACL user cannot PUBLISH on channel executor:signals"
	text  string // the refusal's text; the reply's when empty
	reply error  // Redis's reply (nil: ACL DRYRUN answered the refusal)
	fix   string // what to change: "grant it &executor:*"
}

// Error says what is refused, why, and what to change.
func (e *deniedError) Error() string {
	text := e.text
	if text == "" && e.reply != nil {
		text = e.reply.Error()
	}
	return fmt.Sprintf("%s: %s (%s); %s (%s)", ErrDenied, e.what, text, e.fix, NeedsDoc)
}

// Is makes the error match ErrDenied.
func (e *deniedError) Is(target error) bool { return target == ErrDenied }

// Unwrap returns Redis's reply (nil for ACL DRYRUN's refusals).
func (e *deniedError) Unwrap() error { return e.reply }

// isReply reports whether err is a reply of Redis, as opposed to a failure to reach it.
func isReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// unknown reports whether err says that the server does not know a command or subcommand.
func unknown(err error) bool {
	return redis.HasErrorPrefix(err, "unknown command") || redis.HasErrorPrefix(err, "unknown subcommand")
}
