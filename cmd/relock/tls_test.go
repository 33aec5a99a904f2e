package main_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

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
	writeTLSFiles(t, dir)
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

// writeTLSFiles writes a CA, a server certificate for 127.0.0.1 and a
// client certificate, with their keys, into dir.
func writeTLSFiles(t *testing.T, dir string) {
	t.Helper()
	caKey, caCert := newCert(t, dir, "ca", nil, nil)
	newCert(t, dir, "server", caCert, caKey)
	newCert(t, dir, "client", caCert, caKey)
}

// newCert writes <name>.crt and <name>.key into dir, signed by parent
// (self-signed, a CA, when parent is nil).
func newCert(t *testing.T, dir, name string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "relock cli test " + name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for file, block := range map[string]*pem.Block{
		name + ".crt": {Type: "CERTIFICATE", Bytes: der},
		name + ".key": {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(filepath.Join(dir, file), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert
}
