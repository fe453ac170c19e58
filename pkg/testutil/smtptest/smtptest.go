// Package smtptest runs a local SMTP server for tests, in place of a mail
// relay: it speaks enough of RFC 5321 over real TCP for a client built on
// net/smtp (EHLO, MAIL, RCPT, DATA, RSET, NOOP, QUIT; no STARTTLS, no
// AUTH), accepts every message and keeps it for the test to read.
//
//	srv := smtptest.New(t)
//	... point the client at srv.Addr ...
//	msgs := srv.Messages()
//
// Only the standard library is used, so any module can import it.
package smtptest

import (
	"net"
	"net/textproto"
	"strings"
	"sync"
	"testing"
)

// Message is one accepted message.
type Message struct {
	From string
	To   []string
	Data string // headers and body as sent, dot-unstuffed, CRLF line ends
}

// Server is the running server.
type Server struct {
	// Addr is host:port.
	Addr string
	ln   net.Listener
	mu   sync.Mutex
	msgs []Message
	wg   sync.WaitGroup
}

// New starts a server on a free local port; it stops when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtptest: listen: %v", err)
	}
	s := &Server{Addr: ln.Addr().String(), ln: ln}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(func() { s.Close(); s.wg.Wait() })
	return s
}

// Close stops accepting connections (a relay that went down); sessions in
// progress finish.
func (s *Server) Close() { _ = s.ln.Close() }

// Messages returns the messages accepted so far, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			s.session(textproto.NewConn(c))
		}()
	}
}

func (s *Server) session(c *textproto.Conn) {
	reply := func(code int, msg string) bool { return c.PrintfLine("%d %s", code, msg) == nil }
	if !reply(220, "smtptest ready") {
		return
	}
	var m Message
	for {
		line, err := c.ReadLine()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		ok := true
		switch strings.ToUpper(verb) {
		case "EHLO", "HELO":
			ok = reply(250, "smtptest")
		case "MAIL":
			m = Message{From: addr(arg)}
			ok = reply(250, "ok")
		case "RCPT":
			m.To = append(m.To, addr(arg))
			ok = reply(250, "ok")
		case "DATA":
			if !reply(354, "end with <CRLF>.<CRLF>") {
				return
			}
			lines, err := c.ReadDotLines()
			if err != nil {
				return
			}
			m.Data = strings.Join(lines, "\r\n")
			s.mu.Lock()
			s.msgs = append(s.msgs, m)
			s.mu.Unlock()
			ok = reply(250, "queued")
		case "RSET", "NOOP":
			ok = reply(250, "ok")
		case "QUIT":
			reply(221, "bye")
			return
		default:
			ok = reply(502, "not implemented")
		}
		if !ok {
			return
		}
	}
}

// addr takes the address out of "FROM:<a@b>" or "TO:<a@b> PARAMS".
func addr(arg string) string {
	_, rest, _ := strings.Cut(arg, ":")
	rest, _, _ = strings.Cut(strings.TrimSpace(rest), " ")
	return strings.Trim(rest, "<>")
}
