package main_test

import (
	"context"
	"net"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/uuid"

	"github.com/relock-go/relock/internal/testing/redistest"
)

// TestTLS reads a lock over TLS with a client certificate: with -tls
// and -cacert, with a rediss:// URL, and with -insecure; without TLS the
// server cannot be reached.
func TestTLS(t *testing.T) {
	redistest.SkipShort(t, "a TLS test (certificates generated, a TLS server)")
	srv.RequireReal(t)
	dir := t.TempDir()
	redistest.WriteCerts(t, dir)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	s, err := redistest.Launch("--tls-port", port,
		"--tls-cert-file", filepath.Join(dir, "server.crt"), "--tls-key-file", filepath.Join(dir, "server.key"),
		"--tls-ca-cert-file", filepath.Join(dir, "ca.crt"), "--tls-auth-clients", "yes")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	raw := s.Client(t)
	raw.HSet(context.Background(), "orders:1", uuid.NewString()+":1", 1)

	addr := "127.0.0.1:" + port
	cert := []string{"-cert", filepath.Join(dir, "client.crt"), "-key", filepath.Join(dir, "client.key")}
	for _, conn := range [][]string{
		append([]string{"-url", addr, "-tls", "-cacert", filepath.Join(dir, "ca.crt")}, cert...),
		append([]string{"-url", "rediss://" + addr, "-cacert", filepath.Join(dir, "ca.crt")}, cert...),
		append([]string{"-url", addr, "-insecure"}, cert...),
	} {
		if r := cli(t, "", append(conn, "inspect", "orders:1")...); r.code != 0 {
			t.Fatalf("relock %v: exit %d, %q", conn, r.code, r.stderr)
		}
	}
	fails(t, cli(t, "", append([]string{"-url", addr, "-tls"}, cert...)...), 2, "no command given")
	fails(t, cli(t, "", append([]string{"-url", addr, "-tls", "inspect", "orders:1"}, cert...)...), 1, "cannot reach Redis at "+addr+" (TLS)")
	fails(t, cli(t, "", "-url", addr, "-timeout", "1s", "inspect", "orders:1"), 1, "cannot reach Redis at "+addr)
}
