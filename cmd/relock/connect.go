package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// defaultURL is the server relock talks to when no connection flag is
// given.
const defaultURL = "redis://localhost:6379"

// options are the command line's flags. Each command registers the ones
// it takes; a flag given before the command and again after it takes the
// later value.
type options struct {
	url, sentinel, master, cluster string
	user, password                 string
	timeout                        time.Duration
	json                           bool

	limit    int           // list
	count    int           // watch
	duration time.Duration // watch: -for
	interval time.Duration // watch
	yes      bool          // force-unlock
}

func defaults() *options {
	return &options{timeout: 3 * time.Second, limit: 1000, interval: time.Second}
}

// connFlags registers the flags every command takes, with o's current
// values as defaults, so that a command's flag set keeps what was given
// before the command.
func connFlags(fs *flag.FlagSet, o *options) {
	fs.StringVar(&o.url, "url", o.url, "the Redis server's `URL`, redis://[user:password@]host:port[/db], or\nrediss://... for TLS (default "+defaultURL+")")
	fs.StringVar(&o.sentinel, "sentinel", o.sentinel, "Sentinel `addresses`, host:port,host:port,...; with -master")
	fs.StringVar(&o.master, "master", o.master, "the Sentinel master's `name`, with -sentinel")
	fs.StringVar(&o.cluster, "cluster", o.cluster, "Redis Cluster seed `addresses`, host:port,host:port,...")
	fs.StringVar(&o.user, "user", o.user, "ACL `user` (overrides the one in -url)")
	fs.StringVar(&o.password, "password", o.password, "`password` (overrides the one in -url; default $REDISCLI_AUTH)")
	fs.DurationVar(&o.timeout, "timeout", o.timeout, "bound on connecting and on each Redis call")
	fs.BoolVar(&o.json, "json", o.json, "print JSON instead of tables")
}

func listFlags(fs *flag.FlagSet, o *options) {
	fs.IntVar(&o.limit, "limit", o.limit, "list at most `N` locks (0: no limit)")
}

func watchFlags(fs *flag.FlagSet, o *options) {
	fs.IntVar(&o.count, "count", o.count, "exit after `N` drawings of the state (0: no limit)")
	fs.DurationVar(&o.duration, "for", o.duration, "exit this `duration` after the first drawing (0: when interrupted)")
	fs.DurationVar(&o.interval, "interval", o.interval, "read the lock at least this often (and on its channels' messages)")
}

func forceFlags(fs *flag.FlagSet, o *options) {
	fs.BoolVar(&o.yes, "yes", o.yes, "do not ask for confirmation")
}

// check reports flags that do not go together or are out of range.
func (o *options) check() error {
	given := 0
	for _, s := range []string{o.url, o.sentinel, o.cluster} {
		if s != "" {
			given++
		}
	}
	switch {
	case given > 1:
		return usagef("give only one of -url, -sentinel and -cluster")
	case (o.sentinel == "") != (o.master == ""):
		return usagef("-sentinel and -master go together")
	case o.timeout <= 0:
		return usagef("-timeout must be positive")
	case o.limit < 0 || o.count < 0 || o.duration < 0:
		return usagef("-limit, -count and -for must not be negative")
	case o.interval <= 0:
		return usagef("-interval must be positive")
	}
	return nil
}

// connect makes the go-redis client the flags describe and PINGs it
// within -timeout. cluster reports a cluster client.
func (o *options) connect(ctx context.Context) (rdb redis.UniversalClient, cluster bool, err error) {
	password := o.password
	if password == "" && !strings.Contains(o.url, "@") {
		password = os.Getenv("REDISCLI_AUTH")
	}
	var where string
	switch {
	case o.sentinel != "":
		rdb = redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: o.master, SentinelAddrs: addrs(o.sentinel),
			Username: o.user, Password: password,
			DialTimeout: o.timeout, ReadTimeout: o.timeout, WriteTimeout: o.timeout,
			ContextTimeoutEnabled: true,
		})
		where = fmt.Sprintf("master %q through sentinels %s", o.master, o.sentinel)
	case o.cluster != "":
		rdb = redis.NewClusterClient(&redis.ClusterOptions{
			Addrs:    addrs(o.cluster),
			Username: o.user, Password: password,
			DialTimeout: o.timeout, ReadTimeout: o.timeout, WriteTimeout: o.timeout,
			ContextTimeoutEnabled: true,
		})
		where, cluster = "cluster "+o.cluster, true
	default:
		u := o.url
		if u == "" {
			u = defaultURL
		}
		opt, err := redis.ParseURL(u)
		if err != nil {
			return nil, false, usagef("bad -url: %v", err)
		}
		if o.user != "" {
			opt.Username = o.user
		}
		if password != "" {
			opt.Password = password
		}
		opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = o.timeout, o.timeout, o.timeout
		// A command's -timeout bounds it whole, retries included.
		opt.ContextTimeoutEnabled = true
		rdb = redis.NewClient(opt)
		where = opt.Addr
	}
	pctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		rdb.Close()
		return nil, false, fmt.Errorf("cannot reach Redis at %s: %w", where, err)
	}
	return rdb, cluster, nil
}

// addrs splits a comma-separated list of addresses.
func addrs(list string) []string {
	var out []string
	for a := range strings.SplitSeq(list, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}
