package redistest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// LockUser and LockPassword name the ACL user that every real server
// started here defines besides the default user, allowed only
// LockCommands (and ClusterCommands on a cluster). Tests run relock as
// LockUser (LockClient) and make their own checks as the default user.
const (
	LockUser     = "relock"
	LockPassword = "relock-test-password"
)

// LockCommands is every command relock sends or runs inside its scripts,
// the list docs/operations.md gives for an ACL user; internal/securetest checks
// that the two agree. The connection set-up commands are go-redis's:
// HELLO, CLIENT SETNAME (with a ClientName), and on Redis 7.2 and later
// CLIENT SETINFO, which Redis 7.0 does not know (go-redis ignores its
// error there, and an ACL rule naming it is refused).
var LockCommands = []string{
	// connection set-up and health
	"hello", "ping", "client|setname",
	// scripts
	"eval", "evalsha",
	// pub/sub (global and sharded)
	"subscribe", "unsubscribe", "ssubscribe", "sunsubscribe",
	// state queries and replica sync
	"exists", "hget", "pttl", "wait", "info",
	// inside the scripts
	"hexists", "hincrby", "hset", "hdel", "hlen", "hkeys", "pexpire", "persist", "del",
	"incr", "set", "time", "publish", "spublish",
	"lindex", "lpop", "lpush", "rpush", "lrem", "lrange", "lpos", "llen",
	"zscore", "zadd", "zrem", "zrange", "zincrby",
	"get", "incrby", "decrby", "zremrangebyscore", "zrangebyscore", // semaphore, permits
	"decr",                                 // count-down latch (GET is on the line above)
	"hmget", "xadd", "xrange", "xrevrange", // leader election
	"hrandfield", // group lock
}

// ClusterCommands is what a cluster client needs besides LockCommands:
// go-redis learns the cluster's layout (CLUSTER SLOTS) and its commands'
// key positions (COMMAND), and relock's PubSubAuto asks whether sharded
// pub/sub exists (PUBSUB SHARDNUMSUB).
var ClusterCommands = []string{"cluster|slots", "command", "pubsub|shardnumsub"}

// userArgs are the redis-server arguments that define LockUser, allowed
// LockCommands and extra on every key and channel.
func userArgs(extra ...string) []string {
	args := []string{"--user", LockUser, "on", ">" + LockPassword, "~*", "&*", "-@all"}
	for _, c := range append(append([]string(nil), LockCommands...), extra...) {
		args = append(args, "+"+c)
	}
	return args
}

// StartSecure starts a real redis-server for tb that accepts only TLS
// connections with a client certificate (certificates generated for the
// test) and defines LockUser; it stops when tb ends, failing tb if it
// denied LockUser anything (CheckDenied). Options and Client
// connect as the default user, LockOptions and LockClient as LockUser.
// Without redis-server it skips tb, or fails it under
// RELOCK_REQUIRE_REDIS=1: miniredis has neither TLS nor ACL users. It
// skips tb under go test -short.
func StartSecure(tb testing.TB) *Server {
	tb.Helper()
	SkipShort(tb, "a TLS test (certificates generated, a TLS server)")
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			tb.Fatalf("%s=1 but redis-server is not installed: %v", RequireEnv, err)
		}
		tb.Skip("needs redis-server for TLS and ACL users (install redis-server to run it)")
	}
	dir := tb.TempDir()
	s := &Server{dir: dir, limited: true, tls: WriteCerts(tb, dir)}
	s.args = append([]string{
		"--tls-cert-file", filepath.Join(dir, "server.crt"),
		"--tls-key-file", filepath.Join(dir, "server.key"),
		"--tls-ca-cert-file", filepath.Join(dir, "ca.crt"),
		"--tls-auth-clients", "yes",
	}, userArgs()...)
	if err := s.startOnFreePort(bin, nil); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.CheckDenied(); err != nil {
			tb.Error(err)
		}
		s.Kill()
	})
	return s
}

// Limited reports whether s defines LockUser.
func (s *Server) Limited() bool { return s.limited }

// TLS reports whether s takes TLS connections only (StartSecure).
func (s *Server) TLS() bool { return s.tls != nil }

// denied returns the entries of s's ACL LOG, what a user was refused, as
// "<user>: <reason> <object> (<count> times)": reason is command, key,
// channel or auth, and object the command, key or channel.
func (s *Server) denied(ctx context.Context) ([]string, error) {
	c := s.NewClient()
	defer c.Close()
	entries, err := c.Do(ctx, "ACL", "LOG").Slice()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = fmt.Sprint(e)
		if m, ok := e.(map[any]any); ok {
			out[i] = fmt.Sprintf("%v: %v %v (%v times)", m["username"], m["reason"], m["object"], m["count"])
		}
	}
	return out, nil
}

// CheckDenied returns an error listing what s denied LockUser (its ACL LOG),
// or nil when it denied nothing, is not limited, or is not running.
func (s *Server) CheckDenied() error {
	if !s.limited || s.cmd == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	denied, err := s.denied(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("redistest: reading the ACL LOG of %s: %w", s.Addr, err)
	case len(denied) > 0:
		return fmt.Errorf("redistest: %s denied %s: %s", s.Addr, LockUser, strings.Join(denied, "; "))
	}
	return nil
}

// WriteCerts writes into dir a CA (ca.crt), a certificate for 127.0.0.1
// that servers use both to serve and to connect to each other (the
// cluster bus, Sentinel: server.crt, server.key) and a client
// certificate (client.crt, client.key), and returns a client TLS
// configuration trusting that CA with the client certificate.
func WriteCerts(tb testing.TB, dir string) *tls.Config {
	tb.Helper()
	caKey, caCert, caDER := newCert(tb, "relock test CA", nil, nil, true)
	writePEM(tb, filepath.Join(dir, "ca.crt"), "CERTIFICATE", caDER)
	srvKey, _, srvDER := newCert(tb, "127.0.0.1", caCert, caKey, false)
	writePEM(tb, filepath.Join(dir, "server.crt"), "CERTIFICATE", srvDER)
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		tb.Fatal(err)
	}
	writePEM(tb, filepath.Join(dir, "server.key"), "EC PRIVATE KEY", keyDER)
	cliKey, _, cliDER := newCert(tb, "relock test client", caCert, caKey, false)
	writePEM(tb, filepath.Join(dir, "client.crt"), "CERTIFICATE", cliDER)
	cliKeyDER, err := x509.MarshalECPrivateKey(cliKey)
	if err != nil {
		tb.Fatal(err)
	}
	writePEM(tb, filepath.Join(dir, "client.key"), "EC PRIVATE KEY", cliKeyDER)
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return &tls.Config{
		RootCAs:      pool,
		ServerName:   "127.0.0.1",
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{{Certificate: [][]byte{cliDER}, PrivateKey: cliKey}},
	}
}

var serial atomic.Int64

// newCert makes a key and a certificate for cn, valid for 127.0.0.1 and
// signed by parent (self-signed when parent is nil).
func newCert(tb testing.TB, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, ca bool) (*ecdsa.PrivateKey, *x509.Certificate, []byte) {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	if ca {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	return key, cert, der
}

func writePEM(tb testing.TB, path, kind string, der []byte) {
	tb.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		tb.Fatal(err)
	}
}
