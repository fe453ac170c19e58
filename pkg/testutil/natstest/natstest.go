// Package natstest runs a real embedded NATS server with JetStream inside the
// test process, one per caller, with its store in the test's temp folder.
package natstest

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// MaxStore is the JetStream store limit of every test server, embedded or
// clustered (natscluster), in bytes.
const MaxStore = 64 << 30

// Server is an embedded JetStream server that a test can stop and restart on
// the same port and store, to exercise reconnects and readiness.
type Server struct {
	t    testing.TB
	opts server.Options
	srv  *server.Server
}

// New starts a server on a free loopback port; it shuts down when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, opts: server.Options{
		Host:      "127.0.0.1",
		Port:      server.RANDOM_PORT,
		JetStream: true,
		StoreDir:  t.TempDir(),
		// A fixed store limit, not JetStream's default of 75 % of the free
		// disk at start: streams reserve their MaxBytes (the span stream
		// 4 GiB) against it, and a CI machine with a nearly full disk
		// refused them. Tests store megabytes, never near this.
		JetStreamMaxStore: MaxStore,
		NoLog:             true,
		NoSigs:            true,
	}}
	s.Start()
	// Pin the chosen port so a restart comes back where clients reconnect.
	_, port, _ := net.SplitHostPort(s.srv.Addr().String())
	s.opts.Port, _ = strconv.Atoi(port)
	t.Cleanup(s.Shutdown)
	return s
}

// URL is the client URL of the server.
func (s *Server) URL() string {
	return "nats://" + net.JoinHostPort(s.opts.Host, strconv.Itoa(s.opts.Port))
}

// Start starts (or restarts) the server and waits until it accepts clients.
func (s *Server) Start() {
	s.t.Helper()
	opts := s.opts
	srv, err := server.NewServer(&opts)
	if err != nil {
		s.t.Fatalf("natstest: new server: %v", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		s.t.Fatal("natstest: server not ready within 10s")
	}
	s.srv = srv
}

// Shutdown stops the server; Start brings it back with the same store.
func (s *Server) Shutdown() {
	if s.srv != nil {
		s.srv.Shutdown()
		s.srv.WaitForShutdown()
		s.srv = nil
	}
}
