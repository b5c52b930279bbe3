package server

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/respike/respike/host/config"
)

// TLS is the TLS setup of the client listener: its certificate and client
// CA pool can be reloaded (SIGHUP) while it serves; a handshake takes the
// current ones, connections already open keep theirs.
type TLS struct {
	cfg  config.TLS
	cur  atomic.Pointer[tls.Config]
	base tls.Config // versions, ciphers, client auth: fixed at startup
}

// NewTLS checks cfg and loads its files.
func NewTLS(cfg config.TLS) (*TLS, error) {
	t := &TLS{cfg: cfg}
	t.base.MinVersion, t.base.MaxVersion = tls.VersionTLS13, tls.VersionTLS12
	for _, p := range strings.Fields(cfg.Protocols) {
		v := map[string]uint16{"TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13}[p]
		if v == 0 {
			return nil, fmt.Errorf("tls.protocols: unknown protocol %q", p)
		}
		t.base.MinVersion, t.base.MaxVersion = min(t.base.MinVersion, v), max(t.base.MaxVersion, v)
	}
	if cfg.Ciphers != "" {
		byName := map[string]uint16{}
		for _, s := range tls.CipherSuites() { // the secure ones only
			byName[s.Name] = s.ID
		}
		for _, name := range strings.FieldsFunc(cfg.Ciphers, func(r rune) bool { return r == ':' || r == ' ' || r == ',' }) {
			id, ok := byName[name]
			if !ok {
				return nil, fmt.Errorf("tls.ciphers: %q is not a secure TLS 1.2 cipher suite Go knows (e.g. TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)", name)
			}
			t.base.CipherSuites = append(t.base.CipherSuites, id)
		}
	}
	switch cfg.AuthClients {
	case "yes":
		t.base.ClientAuth = tls.RequireAndVerifyClientCert
	case "optional":
		t.base.ClientAuth = tls.VerifyClientCertIfGiven
	default:
		t.base.ClientAuth = tls.NoClientCert
	}
	if err := t.Reload(); err != nil {
		return nil, err
	}
	return t, nil
}

// Reload reads the certificate, key and CA files again. On an error the
// previous ones stay in use.
func (t *TLS) Reload() error {
	cert, err := tls.LoadX509KeyPair(t.cfg.CertFile, t.cfg.KeyFile)
	if err != nil {
		return fmt.Errorf("tls: load tls.cert_file %s and tls.key_file %s: %w", t.cfg.CertFile, t.cfg.KeyFile, err)
	}
	conf := t.base.Clone()
	conf.Certificates = []tls.Certificate{cert}
	if t.cfg.CACertFile != "" {
		pem, err := os.ReadFile(t.cfg.CACertFile)
		if err != nil {
			return fmt.Errorf("tls: read tls.ca_cert_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("tls: tls.ca_cert_file %s holds no PEM certificate", t.cfg.CACertFile)
		}
		conf.ClientCAs = pool
	}
	t.cur.Store(conf)
	return nil
}

// config is the tls.Config the listener hands each handshake: the current
// one.
func (t *TLS) config() *tls.Config {
	return &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		return t.cur.Load(), nil
	}}
}

// ServeTLS serves clients over TLS on ln (a plain TCP listener) until the
// server closes, as Serve does for plain connections.
func (s *Server) ServeTLS(ln net.Listener, t *TLS) error {
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		s.tlsPort.Store(int64(a.Port))
	}
	return s.serve(tls.NewListener(ln, t.config()))
}

// handshakeTimeout bounds a TLS handshake: a client that connects and says
// nothing does not hold its goroutine beyond it.
const handshakeTimeout = 10 * time.Second

// handshake completes a TLS connection's handshake before its first
// command, so that a refused certificate closes it at once (and is
// logged) rather than at its first read.
func (c *client) handshake() bool {
	tc, ok := c.conn.(*tls.Conn)
	if !ok {
		return true
	}
	_ = tc.SetDeadline(time.Now().Add(handshakeTimeout))
	err := tc.Handshake()
	_ = tc.SetDeadline(time.Time{})
	if err != nil {
		c.s.log.Debug("TLS handshake failed", "client", c.id, "addr", c.addr, "err", err)
		return false
	}
	return true
}
