package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/apikey"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/services/gateway/internal/accounts"
	"github.com/assayhq/assay/services/gateway/internal/audit"
	"github.com/assayhq/assay/services/gateway/internal/httpapi"
	"github.com/assayhq/assay/services/gateway/internal/pgstore"
	"github.com/assayhq/assay/services/gateway/internal/purge"
	"github.com/assayhq/assay/services/gateway/internal/sessions"
	"github.com/assayhq/assay/services/gateway/migrations"
)

const (
	adminKey      = "test-admin-key-0123456789"
	internalToken = "test-internal-token-0123456789"
)

// stack is a gateway on a real port over a fresh PostgreSQL database, with a
// recording upstream standing in for the registry, runtime and tracing.
type stack struct {
	url      string
	upstream *recorder
	pool     *pgxpool.Pool
	purger   *purger
}

// purger is the gateway's real purger (purge.Purger, calling the services'
// internal purge route on the stack's upstream) that also records the
// projects it is asked to purge and checks, against the database, that it
// is asked before their rows are gone.
type purger struct {
	real   *purge.Purger
	pool   *pgxpool.Pool
	mu     sync.Mutex
	purged []uuid.UUID
	// missing counts purge calls that came after some of the rows were
	// already deleted; a test asserts it stays 0.
	missing int
	fail    error
}

func (p *purger) PurgeProjects(ctx context.Context, ids []uuid.UUID) error {
	var n int
	if err := p.pool.QueryRow(ctx, `SELECT count(*) FROM projects WHERE id = ANY($1)`, ids).Scan(&n); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail != nil {
		return p.fail
	}
	if n != len(ids) {
		p.missing++
	}
	p.purged = append(p.purged, ids...)
	return p.real.PurgeProjects(ctx, ids)
}

func (p *purger) calls() ([]uuid.UUID, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]uuid.UUID(nil), p.purged...), p.missing
}

// recorder is an HTTP server that answers every request with what it received.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	last *http.Request
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.last = req.Clone(context.Background())
		r.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"path": req.URL.Path, "query": req.URL.RawQuery, "headers": req.Header, "body": string(body)})
	}))
	t.Cleanup(r.Close)
	return r
}

func startStack(t *testing.T, pgURL string) *stack { return startStackSeeding(t, pgURL, nil) }

// startStackSeeding starts a stack whose account provisioning seeds new
// projects with seed (nil: no seeding).
func startStackSeeding(t *testing.T, pgURL string, seed accounts.Seeder) *stack {
	t.Helper()
	return startStackUpstream(t, pgURL, seed, "", "1M")
}

// startStackUpstream starts a stack whose services are all at upstreamURL
// ("": the recorder), with the given body limit.
func startStackUpstream(t *testing.T, pgURL string, seed accounts.Seeder, upstreamURL, bodyLimit string) *stack {
	t.Helper()
	return startStackConfigured(t, pgURL, seed, upstreamURL, bodyLimit, nil)
}

// startStackConfigured is startStackUpstream with configure applied to the
// accounts service before the server starts (nil: nothing).
func startStackConfigured(t *testing.T, pgURL string, seed accounts.Seeder, upstreamURL, bodyLimit string, configure func(*accounts.Service)) *stack {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log := logx.NewTo(io.Discard, logx.Config{Level: slog.LevelError})
	pool, err := pgxpool.New(ctx, pgURL)
	require.NoError(t, err)
	require.NoError(t, pgxutil.Migrate(ctx, pool, migrations.FS, "gateway_schema_version", log))

	up := newRecorder(t)
	if upstreamURL == "" {
		upstreamURL = up.URL
	}
	verifier := apikey.NewVerifier(pool, apikey.Config{CacheTTL: time.Minute, CacheEntries: 1000}, log)
	rec := &purger{pool: pool, real: purge.New(purge.Target{URL: upstreamURL, Token: internalToken}, purge.Target{URL: upstreamURL, Token: internalToken}, 5*time.Second)}
	srv := httpx.NewServer(httpx.Config{ReadHeaderTimeout: 5 * time.Second, ShutdownTimeout: 5 * time.Second, BodyLimit: bodyLimit}, log, "gateway")
	srv.AddCheck("postgres", pgxutil.Check(pool))
	svc := accounts.NewService(pgstore.New(pool), verifier, seed, rec)
	if configure != nil {
		configure(svc)
	}
	require.NoError(t, httpapi.Register(srv.Echo, httpapi.Deps{
		Accounts: svc, Verifier: verifier, Audit: audit.New(pool),
		Sessions: sessions.NewService(pgstore.NewSessions(pool), svc, sessions.Config{TTL: time.Hour}),
		AdminKey: adminKey,
		// One recorder stands for every service, so one token serves all three pairs here.
		Upstreams: httpapi.Upstreams{Registry: upstreamURL, Runtime: upstreamURL, Tracing: upstreamURL, Console: upstreamURL,
			RegistryToken: internalToken, RuntimeToken: internalToken, TracingToken: internalToken},
		UpstreamTimeout: 5 * time.Second, Log: log,
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{}, 2)
	go func() { _ = verifier.Run(ctx); done <- struct{}{} }()
	go func() { _ = srv.Serve(ctx, ln); done <- struct{}{} }()
	t.Cleanup(func() { cancel(); <-done; <-done; pool.Close() })
	waitListening(t, verifier, pool)
	return &stack{url: "http://" + ln.Addr().String(), upstream: up, pool: pool, purger: rec}
}

// waitListening waits until the verifier's LISTEN is in place, so that a
// revocation in the test is pushed to it.
func waitListening(t *testing.T, _ *apikey.Verifier, pool *pgxpool.Pool) {
	require.Eventually(t, func() bool {
		var n int
		_ = pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'LISTEN %'`).Scan(&n)
		return n > 0
	}, 10*time.Second, 20*time.Millisecond)
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), string(r.body))
	return m
}

func (s *stack) do(t *testing.T, method, path, auth string, body any, headers ...string) resp {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

// account provisions one account and returns its parsed record.
func (s *stack) account(t *testing.T, email string) account {
	t.Helper()
	r := s.do(t, "POST", "/api/admin/simple/accounts/", "Access "+adminKey,
		map[string]any{"accounts": map[string]any{"a": map[string]any{"user": map[string]any{"email": email}}}})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	var out struct {
		Accounts map[string]struct {
			User       struct{ ID string }            `json:"user"`
			Projects   map[string]struct{ ID string } `json:"projects"`
			Workspaces map[string]struct{ ID string } `json:"workspaces"`
			APIKeys    map[string]string              `json:"api_keys"`
		} `json:"accounts"`
	}
	require.NoError(t, json.Unmarshal(r.body, &out))
	a := out.Accounts["a"]
	return account{userID: a.User.ID, projectID: a.Projects["prj"].ID, workspaceID: a.Workspaces["wrk"].ID, key: a.APIKeys["key"]}
}

type account struct{ userID, projectID, workspaceID, key string }

func (a account) auth() string { return "ApiKey " + a.key }

var unauthorized = `{"detail":{"message":"Unauthorized"}}`

func newStack(t *testing.T) *stack { return startStack(t, pgtest.NewURL(t)) }
