package e2e

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
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/respike/respike/host/config"
	"github.com/respike/respike/host/server"
)

// pki is a throwaway CA with the certificates the TLS tests use.
type pki struct {
	dir    string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	pool   *x509.CertPool
	serial int64
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	p := &pki{dir: t.TempDir(), pool: x509.NewCertPool()}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "respike test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p.ca, _ = x509.ParseCertificate(der)
	p.caKey = key
	p.pool.AddCert(p.ca)
	p.write(t, "ca.pem", "CERTIFICATE", der)
	p.serial = 1
	return p
}

func (p *pki) write(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// issue makes a certificate for name (signed by the CA, or by itself when
// rogue), writes name.pem and name.key, and returns it loaded.
func (p *pki) issue(t *testing.T, name string, server, rogue bool) tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p.serial++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(p.serial), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	parent, signer := p.ca, p.caKey
	if rogue {
		parent, signer = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certPath := p.write(t, name+".pem", "CERTIFICATE", der)
	keyPath := p.write(t, name+".key", "EC PRIVATE KEY", kder)
	c, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// serveTLS starts a daemon with a TLS listener of cfg.TLS; it returns the
// TLS address and the setup (for Reload).
func serveTLS(t *testing.T, p *pki, auth string) (string, *server.TLS) {
	t.Helper()
	tcfg := config.TLS{Listen: "127.0.0.1:0", CertFile: filepath.Join(p.dir, "server.pem"),
		KeyFile: filepath.Join(p.dir, "server.key"), CACertFile: filepath.Join(p.dir, "ca.pem"),
		AuthClients: auth, Protocols: "TLSv1.2 TLSv1.3"}
	d := newDaemon(t, func(c *config.Config) { c.TLS = tcfg })
	setup, err := server.NewTLS(tcfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = d.Server.ServeTLS(ln, setup) }() // ends when the daemon stops
	return ln.Addr().String(), setup
}

func tlsClient(t *testing.T, addr string, p *pki, certs ...tls.Certificate) *redis.Client {
	return client(t, addr, func(o *redis.Options) {
		o.TLSConfig = &tls.Config{RootCAs: p.pool, Certificates: certs, MinVersion: tls.VersionTLS12}
		o.MaxRetries = -1
	})
}

func TestTLSClients(t *testing.T) {
	needModules(t, "strings")
	p := newPKI(t)
	p.issue(t, "server", true, false)
	good := p.issue(t, "client", false, false)
	rogue := p.issue(t, "rogue", false, true)
	addr, setup := serveTLS(t, p, "yes")
	ctx := context.Background()

	c := tlsClient(t, addr, p, good)
	if err := c.Set(ctx, "tls:k", "secret", 0).Err(); err != nil {
		t.Fatalf("SET over TLS with a client certificate: %v", err)
	}
	if v, err := c.Get(ctx, "tls:k").Result(); err != nil || v != "secret" {
		t.Fatalf("GET over TLS: %q %v", v, err)
	}
	if err := tlsClient(t, addr, p, rogue).Ping(ctx).Err(); err == nil {
		t.Fatal("a client certificate the CA did not sign was accepted")
	}
	if err := tlsClient(t, addr, p).Ping(ctx).Err(); err == nil {
		t.Fatal("a client without a certificate was accepted with auth_clients yes")
	}
	// Plain text on the TLS port gets nothing served.
	if err := client(t, addr, func(o *redis.Options) { o.MaxRetries = -1 }).Ping(ctx).Err(); err == nil {
		t.Fatal("a plain-text client was served on the TLS port")
	}

	// redis-cli --tls, as an operator would.
	if _, err := exec.LookPath("redis-cli"); err == nil {
		host, port, _ := net.SplitHostPort(addr)
		out, err := exec.Command("redis-cli", "--tls", "-h", host, "-p", port, "--cacert", filepath.Join(p.dir, "ca.pem"),
			"--cert", filepath.Join(p.dir, "client.pem"), "--key", filepath.Join(p.dir, "client.key"), "GET", "tls:k").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "secret" {
			t.Fatalf("redis-cli --tls GET: %q %v", out, err)
		}
	} else {
		t.Log("redis-cli not installed: its TLS check is not run")
	}

	// A new server certificate, reloaded: new connections get it, the open
	// one keeps working.
	oldSerial := peerSerial(t, addr, p, good)
	p.issue(t, "server", true, false)
	if err := setup.Reload(); err != nil {
		t.Fatal(err)
	}
	if s := peerSerial(t, addr, p, good); s == oldSerial {
		t.Fatalf("after Reload the server still presents serial %d", s)
	}
	if v, err := c.Get(ctx, "tls:k").Result(); err != nil || v != "secret" {
		t.Fatalf("GET on the connection opened before the reload: %q %v", v, err)
	}
}

func TestTLSOptionalClientCertificates(t *testing.T) {
	p := newPKI(t)
	p.issue(t, "server", true, false)
	rogue := p.issue(t, "rogue", false, true)
	addr, _ := serveTLS(t, p, "optional")
	ctx := context.Background()
	if err := tlsClient(t, addr, p).Ping(ctx).Err(); err != nil {
		t.Fatalf("no client certificate with auth_clients optional: %v", err)
	}
	// Go's client sends no certificate the server's CA list does not name:
	// make it send the rogue one regardless.
	forced := client(t, addr, func(o *redis.Options) {
		o.TLSConfig = &tls.Config{RootCAs: p.pool, GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return &rogue, nil
		}}
		o.MaxRetries = -1
	})
	if err := forced.Ping(ctx).Err(); err == nil {
		t.Fatal("an unverifiable client certificate was accepted with auth_clients optional")
	}
}

// peerSerial is the serial of the certificate the server presents.
func peerSerial(t *testing.T, addr string, p *pki, cert tls.Certificate) int64 {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: p.pool, Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}

// nonLoopbackIP is an address of this machine outside the loopback
// interface, or nil.
func nonLoopbackIP() net.IP {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP
		}
	}
	return nil
}

// Protected mode through a real TCP client from this machine's own
// non-loopback address: refused with Redis's text while no password is set.
func TestProtectedModeRefusesRemoteClients(t *testing.T) {
	ip := nonLoopbackIP()
	if ip == nil {
		t.Skip("this machine has no non-loopback IPv4 address to connect from")
	}
	d := newDaemon(t, func(*config.Config) {})
	// A second listener on that address; a client dialling it comes from it.
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = d.Server.Serve(ln) }() // ends when the daemon stops
	remote := ln.Addr().String()
	ctx := context.Background()
	// A raw RESP client: its PING's answer is the refusal, then the close.
	// (go-redis opens with HELLO, takes the refusal as "no HELLO here" and
	// goes on to a closed connection, reporting EOF.)
	r := raw(t, remote)
	if got := do(t, r, "PING"); !strings.HasPrefix(got, "-DENIED Redis is running in protected mode") {
		t.Fatalf("PING from %s: %q", ip, got)
	}
	if closed, err := r.Closed(); !closed || err != nil {
		t.Fatalf("refused connection not closed: %v", err)
	}
	// From loopback the daemon serves; with protected mode off, the remote client too.
	if err := client(t, d.Addr).ConfigSet(ctx, "protected-mode", "no").Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := client(t, remote).Ping(ctx).Result(); err != nil || v != "PONG" {
		t.Fatalf("PING from %s with protected-mode no: %q %v", ip, v, err)
	}
}
