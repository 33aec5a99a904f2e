package securetest_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// lockUser and lockPassword name the ACL user relock runs as.
const (
	lockUser     = "relock"
	lockPassword = "relock-test-password"
)

// lockCommands is every command relock sends or runs inside its scripts,
// the list the README gives for an ACL user. The connection set-up
// commands are go-redis's: HELLO, CLIENT SETNAME (with a ClientName), and
// on Redis 7.2 and later CLIENT SETINFO, which Redis 7.0 does not know
// (go-redis ignores its error there, and an ACL rule naming it is
// refused).
var lockCommands = []string{
	// connection set-up and health
	"hello", "client|setname", "ping",
	// scripts
	"eval", "evalsha",
	// pub/sub (global and sharded)
	"subscribe", "unsubscribe", "ssubscribe", "sunsubscribe",
	// state queries and replica sync
	"exists", "hget", "pttl", "wait",
	// inside the scripts
	"hexists", "hincrby", "hset", "hdel", "hlen", "hkeys", "pexpire", "del",
	"incr", "set", "time", "publish", "spublish",
	"lindex", "lpop", "rpush", "lrem", "lrange", "lpos",
	"zscore", "zadd", "zrem", "zrange", "zincrby",
}

// secureServer is a redis-server of the test's own that accepts only TLS
// connections with a client certificate, and has an ACL user limited to
// lockCommands besides the default user (for the test's own checks).
type secureServer struct {
	addr string
	tls  *tls.Config
}

// startSecure starts a secureServer, generating its certificates.
func startSecure(t *testing.T) *secureServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("RELOCK_REQUIRE_REDIS") == "1" {
			t.Fatalf("RELOCK_REQUIRE_REDIS=1 but redis-server is not installed: %v", err)
		}
		t.Skip("needs redis-server with TLS (install redis-server to run it)")
	}
	dir := t.TempDir()
	clientTLS := writeCerts(t, dir)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	args := []string{
		"--port", "0", "--tls-port", port, "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--loglevel", "warning",
		"--tls-cert-file", filepath.Join(dir, "server.crt"),
		"--tls-key-file", filepath.Join(dir, "server.key"),
		"--tls-ca-cert-file", filepath.Join(dir, "ca.crt"),
		"--tls-auth-clients", "yes",
		"--user", lockUser, "on", ">" + lockPassword, "~*", "&*", "-@all",
	}
	for _, c := range lockCommands {
		args = append(args, "+"+c)
	}
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	s := &secureServer{addr: "127.0.0.1:" + port, tls: clientTLS}
	admin := s.admin(t)
	deadline := time.Now().Add(10 * time.Second)
	for admin.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("TLS redis-server did not answer: %s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s
}

// admin returns a client of the default user, for the test's checks.
func (s *secureServer) admin(t *testing.T) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.addr, TLSConfig: s.tls.Clone(), MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

// lockClient returns a client of the limited ACL user.
func (s *secureServer) lockClient(t *testing.T) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.addr, TLSConfig: s.tls.Clone(), Username: lockUser, Password: lockPassword})
	t.Cleanup(func() { c.Close() })
	return c
}

// writeCerts writes a CA, a server certificate for 127.0.0.1 and a client
// certificate into dir, and returns the client's TLS configuration.
func writeCerts(t *testing.T, dir string) *tls.Config {
	t.Helper()
	caKey, caCert, caDER := newCert(t, "relock test CA", nil, nil, true)
	write(t, filepath.Join(dir, "ca.crt"), "CERTIFICATE", caDER)
	srvKey, _, srvDER := newCert(t, "127.0.0.1", caCert, caKey, false)
	write(t, filepath.Join(dir, "server.crt"), "CERTIFICATE", srvDER)
	writeKey(t, filepath.Join(dir, "server.key"), srvKey)
	cliKey, _, cliDER := newCert(t, "relock test client", caCert, caKey, false)
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return &tls.Config{
		RootCAs:      pool,
		ServerName:   "127.0.0.1",
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{{Certificate: [][]byte{cliDER}, PrivateKey: cliKey}},
	}
}

var serial int64

// newCert makes a key and a certificate for cn, signed by parent (self-
// signed when parent is nil).
func newCert(t *testing.T, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, ca bool) (*ecdsa.PrivateKey, *x509.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
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
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert, der
}

func write(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeKey(t *testing.T, path string, key *ecdsa.PrivateKey) {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write(t, path, "EC PRIVATE KEY", der)
}
