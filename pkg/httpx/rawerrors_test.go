package httpx_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawExchange writes raw bytes to addr and reads one response.
func rawExchange(t *testing.T, conn net.Conn, req string) *http.Response {
	t.Helper()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	go func() { _, _ = io.WriteString(conn, req) }() // the server may answer before reading it all
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	return res
}

// TestMalformedRequestsGetJSON sends requests net/http refuses before any
// handler runs, over raw TCP, and checks each answer is our JSON error
// body naming the problem, with the right status.
func TestMalformedRequestsGetJSON(t *testing.T) {
	s := newServer()
	s.Echo.GET("/ok", func(c echo.Context) error { return c.String(http.StatusOK, "fine") })
	addr := strings.TrimPrefix(serve(t, s), "http://")

	bigHeaders := "GET /ok HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-Pad: "+strings.Repeat("a", 1000)+"\r\n", 1100) + "\r\n"
	for _, tc := range []struct {
		name, req string
		status    int
		mentions  []string
	}{
		{"NUL in a header value", "GET /ok HTTP/1.1\r\nHost: x\r\nX-Name: a\x00b\r\n\r\n", 400, []string{"NUL", `"X-Name"`}},
		{"CR in a header value", "GET /ok HTTP/1.1\r\nHost: x\r\nX-Name: a\rb\r\n\r\n", 400, []string{"carriage return", `"X-Name"`}},
		{"control character in a header name", "GET /ok HTTP/1.1\r\nHost: x\r\nX-\x01Name: a\r\n\r\n", 400, []string{"control character", "header name"}},
		{"garbage request line", "HELLO THERE\r\n\r\n", 400, []string{"request line", `"HELLO THERE"`}},
		{"header line without colon", "GET /ok HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n", 400, []string{"no colon", `"NoColonHere"`}},
		{"missing Host", "GET /ok HTTP/1.1\r\n\r\n", 400, []string{"missing required Host header"}},
		{"1 MB of headers", bigHeaders, 431, []string{"limit of 1048576 bytes"}},
		{"unknown transfer coding", "POST /ok HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, []string{"Transfer-Encoding"}},
		{"unsupported HTTP version", "GET /ok HTTP/2.5\r\nHost: x\r\n\r\n", 505, []string{"unsupported protocol version"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			defer conn.Close()
			res := rawExchange(t, conn, tc.req)
			body, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			assert.Equal(t, tc.status, res.StatusCode, string(body))
			assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
			var got struct {
				Detail struct {
					Message string `json:"message"`
				} `json:"detail"`
			}
			require.NoError(t, json.Unmarshal(body, &got), string(body))
			for _, m := range tc.mentions {
				assert.Contains(t, got.Detail.Message, m)
			}
		})
	}

	t.Run("a fault on a kept-alive connection is named too", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		res := rawExchange(t, conn, "GET /ok HTTP/1.1\r\nHost: x\r\nX-Body: \x01\x02\r\n\r\n")
		_ = res.Body.Close()
		require.Equal(t, http.StatusBadRequest, res.StatusCode, "a control character in a value")

		conn2, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn2.Close()
		r := bufio.NewReader(conn2)
		require.NoError(t, conn2.SetDeadline(time.Now().Add(10*time.Second)))
		_, err = io.WriteString(conn2, "POST /ok HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\na\x00b\rc")
		require.NoError(t, err)
		ok, err := http.ReadResponse(r, nil)
		require.NoError(t, err)
		b, _ := io.ReadAll(ok.Body)
		require.Equal(t, http.StatusMethodNotAllowed, ok.StatusCode, "a body with NUL and CR is no header fault: %s", b)
		_, err = io.WriteString(conn2, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
		ok, err = http.ReadResponse(r, nil)
		require.NoError(t, err)
		b, _ = io.ReadAll(ok.Body)
		require.Equal(t, http.StatusOK, ok.StatusCode)
		assert.Equal(t, "fine", string(b))
		_, err = io.WriteString(conn2, "GET /ok HTTP/1.1\r\nHost: x\r\nX-Second: a\x00\r\n\r\n")
		require.NoError(t, err)
		bad, err := http.ReadResponse(r, nil)
		require.NoError(t, err)
		b, _ = io.ReadAll(bad.Body)
		assert.Equal(t, http.StatusBadRequest, bad.StatusCode)
		assert.Contains(t, string(b), `NUL character in the value of header \"X-Second\"`)
	})
}
