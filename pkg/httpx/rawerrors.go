package httpx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// net/http answers a request it cannot parse (a NUL or bare CR in a header,
// a header block over MaxHeaderBytes, a garbled request line, an unknown
// transfer coding) itself, before any handler runs, by writing a fixed
// plain-text response straight to the connection in one Write call:
//
//	HTTP/1.1 <code> <text>\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n<body>
//
// where <body> repeats the status line's text (or, for 501, says
// "Unsupported transfer encoding"). jsonConn recognises exactly that write
// and replaces it by our JSON error body with the same status.
//
// Why a connection wrapper and not middleware with a raised header limit:
// these requests never reach a handler, so only the bytes on the wire can
// be changed; raising MaxHeaderBytes would still leave NUL, CR and request
// line errors as plain text, and would let every handler pay for giant
// header blocks. The pattern cannot match an ordinary response: those
// always carry Date and write their headers sorted, so Connection would
// come before Content-Type.
const rawErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// jsonListener wraps every accepted connection in a jsonConn.
type jsonListener struct {
	net.Listener
	headerLimit int
}

func (l jsonListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &jsonConn{Conn: c, headerLimit: l.headerLimit}, nil
}

// jsonConn rewrites net/http's plain-text errors and, while a request head
// is being read, watches it for the faults net/http reports without a
// reason, so the JSON body can name them.
type jsonConn struct {
	net.Conn
	headerLimit int

	reading atomic.Bool // a request head is being read (ConnState new or idle)
	mu      sync.Mutex
	head    headScan
}

// connState is the http.Server ConnState hook: a head is read while the
// connection is new or idle; once net/http has the head (active), the bytes
// read are a body and are not looked at.
func connState(c net.Conn, st http.ConnState) {
	jc, ok := c.(*jsonConn)
	if !ok {
		return
	}
	switch st {
	case http.StateNew, http.StateIdle:
		jc.mu.Lock()
		jc.head = headScan{}
		jc.mu.Unlock()
		jc.reading.Store(true)
	case http.StateActive:
		jc.reading.Store(false)
	}
}

func (c *jsonConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.reading.Load() {
		c.mu.Lock()
		c.head.feed(p[:n])
		c.mu.Unlock()
	}
	return n, err
}

func (c *jsonConn) Write(p []byte) (int, error) {
	code, text, ok := parseRawError(p)
	if !ok {
		return c.Conn.Write(p)
	}
	c.mu.Lock()
	problem := c.head.problem
	c.mu.Unlock()
	if _, err := c.Conn.Write(c.jsonError(code, text, problem)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CloseWrite and ReadFrom pass through what net/http looks for on a
// *net.TCPConn: the half-close that lets a client read a 431 before the
// connection resets, and sendfile/splice for bodies.
func (c *jsonConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *jsonConn) ReadFrom(r io.Reader) (int64, error) { return io.Copy(c.Conn, r) }

// parseRawError reports whether p is one of net/http's fixed plain-text
// error responses, and returns its status and the text after the status
// ("" when there is none, as for the generic 400).
func parseRawError(p []byte) (code int, text string, ok bool) {
	rest, found := bytes.CutPrefix(p, []byte("HTTP/1.1 "))
	if !found {
		return 0, "", false
	}
	status, body, found := bytes.Cut(rest, []byte(rawErrorHeaders))
	if !found || len(status) < 4 || status[3] != ' ' {
		return 0, "", false
	}
	if !bytes.Equal(body, status) && string(body) != "Unsupported transfer encoding" {
		return 0, "", false
	}
	code, err := strconv.Atoi(string(status[:3]))
	if err != nil || code < 400 || code > 599 {
		return 0, "", false
	}
	// "400 Bad Request: missing required Host header" → "missing required Host header"
	_, after, _ := bytes.Cut(status[4:], []byte(": "))
	text = string(after)
	if string(body) == "Unsupported transfer encoding" {
		text = "unsupported Transfer-Encoding; only chunked is accepted"
	}
	return code, text, true
}

func (c *jsonConn) jsonError(code int, text, problem string) []byte {
	detail := map[string]any{}
	switch {
	case code == http.StatusRequestHeaderFieldsTooLarge:
		detail["message"] = fmt.Sprintf("The request headers are larger than the limit of %d bytes.", c.headerLimit)
		detail["limit"] = c.headerLimit
	case problem != "":
		detail["message"] = "Malformed request: " + problem + "."
	case text != "":
		detail["message"] = "Malformed request: " + text + "."
	default:
		detail["message"] = "Malformed request: the request line or a header is not valid HTTP/1.1."
	}
	body, _ := json.Marshal(ErrorBody{Detail: detail})
	head := fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nX-Content-Type-Options: nosniff\r\nContent-Length: %d\r\nConnection: close\r\n\r\n",
		code, http.StatusText(code), len(body))
	return append([]byte(head), body...)
}

// headScan follows a request head byte by byte, keeping only the first
// fault it finds (which net/http answers with a bare "400 Bad Request")
// and the little it needs to name where it is. Linear, and it keeps at
// most a few hundred bytes whatever the head's size.
type headScan struct {
	done    bool   // the blank line ending the head was seen
	line    int    // 0 is the request line
	col     int    // bytes so far on this line
	cr      bool   // the previous byte was a CR
	inName  bool   // still before the colon of a header line
	text    []byte // the request line or the header name, up to maxKept bytes
	problem string
}

const maxKept = 128

func (h *headScan) feed(p []byte) {
	for _, c := range p {
		if h.done {
			return
		}
		if h.cr {
			h.cr = false
			if c == '\n' {
				h.endLine()
				continue
			}
			h.fault("a carriage return (CR) not followed by LF in " + h.where())
		}
		switch {
		case c == '\r':
			h.cr = true
			continue
		case c == '\n':
			h.endLine()
			continue
		case c == 0:
			h.fault("a NUL character in " + h.where())
		case c < 0x20 && c != '\t' || c == 0x7f:
			h.fault(fmt.Sprintf("a control character (0x%02x) in %s", c, h.where()))
		}
		if h.line > 0 && h.col == 0 {
			h.inName = true
		}
		if h.line > 0 && h.inName && c == ':' {
			h.inName = false
		} else if (h.line == 0 || h.inName) && len(h.text) < maxKept {
			h.text = append(h.text, c)
		}
		h.col++
	}
}

func (h *headScan) endLine() {
	switch {
	case h.line == 0 && h.col == 0:
		return // net/http skips blank lines before a request line
	case h.line == 0:
		if f := bytes.Fields(h.text); len(f) != 3 || !bytes.HasPrefix(f[2], []byte("HTTP/")) {
			h.fault("the request line " + quoted(h.text) + ", which is not METHOD /path HTTP/1.1")
		}
	case h.col == 0:
		h.done = true
	case h.inName:
		h.fault("the header line starting " + quoted(h.text) + ", which has no colon")
	}
	h.line++
	h.col, h.inName, h.text = 0, false, h.text[:0]
}

func (h *headScan) where() string {
	switch {
	case h.line == 0:
		return "the request line"
	case h.col == 0 || h.inName:
		return "a header name"
	}
	return "the value of header " + quoted(h.text)
}

func (h *headScan) fault(msg string) {
	if h.problem == "" {
		h.problem = msg
	}
}

// quoted renders bytes from the wire for a message: valid UTF-8 only,
// control characters escaped.
func quoted(b []byte) string {
	if !utf8.Valid(b) {
		b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	return strconv.Quote(string(b))
}
