package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/grouplock"
)

// defaultURL is the server relock talks to when no connection flag is
// given and REDIS_URL is unset.
const defaultURL = "redis://localhost:6379"

// clientName is the name every connection gives itself (CLIENT SETNAME),
// so that CLIENT LIST tells an operator's session apart.
const clientName = "relock-cli"

// options are the command line's flags. Each command registers the ones
// it takes; a flag given before the command and again after it takes the
// later value.
type options struct {
	url, sentinel, master, cluster string
	user, password                 string
	timeout                        time.Duration
	json                           bool
	tls, insecure                  bool
	cacert, cert, key              string

	limit    int           // list
	kinds    string        // list
	skipIdle bool          // list
	count    int           // watch
	duration time.Duration // watch: -for
	interval time.Duration // watch
	yes      bool          // force-unlock
	codec    string        // inspect, force-unlock: -codec
	old      time.Duration // doctor
	lease    time.Duration // doctor
	state    string        // doctor

	groupCodec grouplock.Codec // -codec, as check reads it
}

func defaults() *options {
	return &options{timeout: 3 * time.Second, limit: 1000, interval: time.Second, old: 10 * time.Minute, lease: 30 * time.Second, codec: "kryo5"}
}

// connFlags registers the flags every command takes, with o's current
// values as defaults, so that a command's flag set keeps what was given
// before the command.
func connFlags(fs *flag.FlagSet, o *options) {
	fs.StringVar(&o.url, "url", o.url, "the Redis server, `host:port` or redis://[user:password@]host:port[/db]\n(rediss://... for TLS); default $REDIS_URL, else "+defaultURL)
	fs.StringVar(&o.sentinel, "sentinel", o.sentinel, "Sentinel `addresses`, host:port,host:port,...; with -master")
	fs.StringVar(&o.master, "master", o.master, "the Sentinel master's `name`, with -sentinel")
	fs.StringVar(&o.cluster, "cluster", o.cluster, "Redis Cluster seed `addresses`, host:port,host:port,...")
	fs.StringVar(&o.user, "user", o.user, "ACL `user` (overrides the one in -url)")
	fs.StringVar(&o.password, "password", o.password, "`password` (overrides the one in -url; default $REDISCLI_AUTH)")
	fs.DurationVar(&o.timeout, "timeout", o.timeout, "bound on connecting and on each Redis call")
	fs.BoolVar(&o.tls, "tls", o.tls, "connect with TLS (implied by rediss:// and the other TLS flags)")
	fs.StringVar(&o.cacert, "cacert", o.cacert, "`file` of PEM CA certificates to verify the server with (default: the system's)")
	fs.StringVar(&o.cert, "cert", o.cert, "client certificate `file` (PEM), with -key")
	fs.StringVar(&o.key, "key", o.key, "client private key `file` (PEM), with -cert")
	fs.BoolVar(&o.insecure, "insecure", o.insecure, "do not verify the server's certificate (TLS)")
	fs.BoolVar(&o.json, "json", o.json, "print JSON instead of tables")
}

func listFlags(fs *flag.FlagSet, o *options) {
	fs.IntVar(&o.limit, "limit", o.limit, "list at most `N` records (0: no limit)")
	fs.StringVar(&o.kinds, "kind", o.kinds, "list only these `kinds`, comma-separated: lock, rwlock, group, count,\nelection, fencing, fence (default: all)")
	fs.BoolVar(&o.skipIdle, "skip-idle", o.skipIdle, "leave out the counts whose use nothing shows now (an idle semaphore's or\nlatch's, another application's integer key) and say how many, on standard error")
}

func doctorFlags(fs *flag.FlagSet, o *options) {
	fs.DurationVar(&o.old, "old", o.old, "report holds and waits older than this")
	fs.DurationVar(&o.lease, "lease", o.lease, "the lease holders renew to (their WatchdogTimeout)")
	fs.StringVar(&o.state, "state", o.state, "`file` that keeps when each hold was first seen, from run to run\n(holds' ages are known only so)")
}

func watchFlags(fs *flag.FlagSet, o *options) {
	fs.IntVar(&o.count, "count", o.count, "exit after `N` drawings of the state (0: no limit)")
	fs.DurationVar(&o.duration, "for", o.duration, "exit this `duration` after the first drawing (0: when interrupted)")
	fs.DurationVar(&o.interval, "interval", o.interval, "read the lock at least this often (and on its channels' messages)")
}

func forceFlags(fs *flag.FlagSet, o *options) {
	fs.BoolVar(&o.yes, "yes", o.yes, "do not ask for confirmation")
	codecFlag(fs, o)
}

// codecFlag registers -codec, for a group lock's VALUEs.
func codecFlag(fs *flag.FlagSet, o *options) {
	fs.StringVar(&o.codec, "codec", o.codec, "the `codec` a group lock's Redisson clients hash its VALUEs with:\nkryo5 (Redisson's default) or string (StringCodec)")
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
	case o.old <= 0 || o.lease <= 0:
		return usagef("-old and -lease must be positive")
	case (o.cert == "") != (o.key == ""):
		return usagef("-cert and -key go together")
	}
	switch o.codec {
	case "kryo5":
		o.groupCodec = grouplock.Kryo5Codec
	case "string":
		o.groupCodec = grouplock.StringCodec
	default:
		return usagef("-codec %q: give kryo5 or string", o.codec)
	}
	return nil
}

// tlsConfig returns the TLS configuration the flags ask for, or nil for
// none. A rediss:// URL's configuration (base) is kept and added to.
func (o *options) tlsConfig(base *tls.Config) (*tls.Config, error) {
	if base == nil && !o.tls && !o.insecure && o.cacert == "" && o.cert == "" {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if base != nil {
		c = base.Clone()
	}
	c.InsecureSkipVerify = c.InsecureSkipVerify || o.insecure
	if o.cacert != "" {
		pem, err := os.ReadFile(o.cacert)
		if err != nil {
			return nil, usagef("-cacert: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usagef("-cacert: no PEM certificate in %s", o.cacert)
		}
		c.RootCAs = pool
	}
	if o.cert != "" {
		pair, err := tls.LoadX509KeyPair(o.cert, o.key)
		if err != nil {
			return nil, usagef("-cert and -key: %v", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// serverURL is the single server to reach: -url, else $REDIS_URL, else
// the default; host:port is taken as redis://host:port.
func (o *options) serverURL() string {
	u := o.url
	if u == "" {
		u = os.Getenv("REDIS_URL")
	}
	if u == "" {
		u = defaultURL
	}
	if !strings.Contains(u, "://") {
		u = "redis://" + u
	}
	return u
}

// connect makes the go-redis client the flags describe and PINGs it
// within -timeout. cluster reports a cluster client.
func (o *options) connect(ctx context.Context) (rdb redis.UniversalClient, cluster bool, err error) {
	password := o.password
	if password == "" && (o.url != "" || o.sentinel == "" && o.cluster == "") && !strings.Contains(o.serverURL(), "@") {
		password = os.Getenv("REDISCLI_AUTH")
	}
	var where string
	switch {
	case o.sentinel != "":
		tc, err := o.tlsConfig(nil)
		if err != nil {
			return nil, false, err
		}
		rdb = redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: o.master, SentinelAddrs: addrs(o.sentinel),
			Username: o.user, Password: password, ClientName: clientName, TLSConfig: tc,
			DialTimeout: o.timeout, ReadTimeout: o.timeout, WriteTimeout: o.timeout,
			ContextTimeoutEnabled: true,
		})
		where = fmt.Sprintf("master %q through sentinels %s", o.master, o.sentinel)
	case o.cluster != "":
		tc, err := o.tlsConfig(nil)
		if err != nil {
			return nil, false, err
		}
		rdb = redis.NewClusterClient(&redis.ClusterOptions{
			Addrs:    addrs(o.cluster),
			Username: o.user, Password: password, ClientName: clientName, TLSConfig: tc,
			DialTimeout: o.timeout, ReadTimeout: o.timeout, WriteTimeout: o.timeout,
			ContextTimeoutEnabled: true,
		})
		where, cluster = "cluster "+o.cluster, true
	default:
		u := o.serverURL()
		opt, err := redis.ParseURL(u)
		if err != nil {
			return nil, false, usagef("bad -url (or $REDIS_URL) %q: %v; give host:port or redis://host:port", u, err)
		}
		if opt.TLSConfig, err = o.tlsConfig(opt.TLSConfig); err != nil {
			return nil, false, err
		}
		if o.user != "" {
			opt.Username = o.user
		}
		if password != "" {
			opt.Password = password
		}
		opt.ClientName = clientName
		opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = o.timeout, o.timeout, o.timeout
		// A command's -timeout bounds it whole, retries included.
		opt.ContextTimeoutEnabled = true
		rdb = redis.NewClient(opt)
		where = opt.Addr
		if opt.TLSConfig != nil {
			where += " (TLS)"
		}
	}
	pctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		rdb.Close()
		return nil, false, connectError(where, err)
	}
	return rdb, cluster, nil
}

// connectError tells why the first PING to where failed: Redis refused
// the credentials, Redis refused something else (an ACL without PING, a
// server still loading), or it could not be reached at all.
func connectError(where string, err error) error {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return fmt.Errorf("cannot reach Redis at %s: %w (check the address, and -tls with -cacert for a TLS server)", where, err)
	}
	msg := rerr.Error()
	if strings.HasPrefix(msg, "WRONGPASS") || strings.HasPrefix(msg, "NOAUTH") ||
		strings.Contains(msg, "AUTH") && strings.Contains(msg, "without any password configured") {
		return fmt.Errorf("authentication to Redis at %s failed: %w (check -user and -password, the user and password in -url, and $REDISCLI_AUTH)", where, err)
	}
	return fmt.Errorf("the Redis server at %s refused the connection: %w (check the user's ACL and the server's state)", where, err)
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
