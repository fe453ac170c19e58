package purgewire_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/purgewire"
)

// TestHandler: a good list reaches the purge whole; every bad body is a
// 4xx naming the problem and purges nothing.
func TestHandler(t *testing.T) {
	var got []uuid.UUID
	srv := httpx.NewServer(httpx.Config{}, slog.New(slog.NewTextHandler(io.Discard, nil)), "test")
	srv.Echo.POST(purgewire.Path, purgewire.Handler(func(_ echo.Context, ids []uuid.UUID) error {
		got = append(got, ids...)
		return nil
	}))
	hs := httptest.NewServer(srv.Echo)
	t.Cleanup(hs.Close)
	post := func(body string) (int, string) {
		res, err := http.Post(hs.URL+purgewire.Path, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	a, b := uuid.New(), uuid.New()
	status, body := post(`{"project_ids":["` + a.String() + `","` + b.String() + `"]}`)
	require.Equal(t, http.StatusOK, status, body)
	assert.JSONEq(t, `{"count":2,"project_ids":["`+a.String()+`","`+b.String()+`"]}`, body)
	assert.Equal(t, []uuid.UUID{a, b}, got)

	got = nil
	for _, bad := range []string{`{}`, `{"project_ids":[]}`, `{"project_ids":["nope"]}`, `{"project_ids":["00000000-0000-0000-0000-000000000000"]}`, `{"project_ids":`, `[]`} {
		status, body := post(bad)
		assert.True(t, status >= 400 && status < 500, "%s: %d %s", bad, status, body)
		assert.Contains(t, body, `"detail"`, bad)
	}
	assert.Empty(t, got, "nothing purged on a bad body")
}
