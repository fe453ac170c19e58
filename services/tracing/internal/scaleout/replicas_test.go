package scaleout_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/testutil/chtest"
	"github.com/assayhq/assay/pkg/testutil/llmtest"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/pkg/testutil/platformtest"
	"github.com/assayhq/assay/pkg/testutil/svctest"
	"github.com/assayhq/assay/pkg/testutil/writertest"
)

const adminKey = "scaleout-admin-key-0123456789"

var hexID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// replica is one copy of every service: gateway i talks to registry i,
// runtime i and tracing i, as a Kubernetes Service would route to one of
// them; writer i consumes the shared durable consumer.
type replica struct {
	gateway, registry, runtime, tracing *svctest.Service
	writer                              *writertest.Writer
	all                                 []*svctest.Service
}

// start launches every process of the replica without waiting, so both
// replicas migrate at the same moment (the advisory and ClickHouse
// migration locks are what keeps that safe).
func startReplica(t *testing.T, pg, natsURL, chURL, llmURL string) *replica {
	env := func(service string, extra ...string) []string {
		return append(platformtest.TokenEnv(service), extra...)
	}
	r := &replica{}
	r.registry = svctest.Start(t, svctest.Options{Pkg: "services/registry/cmd/registry", AddrVar: "REGISTRY_ADDR", NoWait: true,
		Env: env("registry", "REGISTRY_POSTGRES_URL="+pg, "REGISTRY_NATS_URL="+natsURL, "REGISTRY_LOG_LEVEL=warn", "REGISTRY_VAULT_KEY=MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")})
	r.tracing = svctest.Start(t, svctest.Options{Pkg: "services/tracing/cmd/tracing", AddrVar: "TRACING_ADDR", NoWait: true,
		Env: env("tracing", "TRACING_NATS_URL="+natsURL, "TRACING_CLICKHOUSE_URL="+chURL, "TRACING_REGISTRY_URL="+r.registry.URL,
			"TRACING_OTLP_HTTP_ADDR=", "TRACING_OTLP_GRPC_ADDR=", "TRACING_LOG_LEVEL=warn")})
	r.runtime = svctest.Start(t, svctest.Options{Pkg: "services/runtime/cmd/runtime", AddrVar: "RUNTIME_ADDR", NoWait: true,
		Env: env("runtime", "RUNTIME_NATS_URL="+natsURL, "RUNTIME_REGISTRY_URL="+r.registry.URL, "RUNTIME_TRACING_URL="+r.tracing.URL, "RUNTIME_LOG_LEVEL=warn",
			"RUNTIME_LLM_BASE_URLS=openai="+llmURL, "OPENAI_API_KEY=sk-test-env",
			// The model server is on loopback, which the runtime refuses
			// unless its egress allow-list admits it.
			"RUNTIME_EGRESS_ALLOW="+strings.TrimSuffix(strings.TrimPrefix(llmURL, "http://"), "/v1"))})
	r.gateway = svctest.Start(t, svctest.Options{Pkg: "services/gateway/cmd/gateway", AddrVar: "GATEWAY_ADDR", NoWait: true,
		Env: env("gateway", "GATEWAY_POSTGRES_URL="+pg, "GATEWAY_ADMIN_KEY="+adminKey, "GATEWAY_REGISTRY_URL="+r.registry.URL,
			"GATEWAY_RUNTIME_URL="+r.runtime.URL, "GATEWAY_TRACING_URL="+r.tracing.URL, "GATEWAY_LOG_LEVEL=warn",
			"GATEWAY_METRICS_ADDR=")}) // off: the replicas would share its default port
	r.all = []*svctest.Service{r.registry, r.tracing, r.runtime, r.gateway}
	return r
}

func (r *replica) waitReady() {
	for _, s := range r.all {
		s.WaitReady()
	}
}

// client spreads requests over the gateways and retries a failed one on
// the next gateway, as a client behind a load balancer does.
type client struct {
	gateways []string
	http     *http.Client
	next     atomic.Int64
}

type answer struct {
	status int
	body   []byte
}

func (c *client) do(method, path, auth string, body any) (answer, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return answer{}, err
		}
		rd = bytes.NewReader(b)
	}
	gw := c.gateways[int(c.next.Add(1))%len(c.gateways)]
	req, err := http.NewRequest(method, gw+path, rd)
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", auth)
	res, err := c.http.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, body: b}, err
}

// retry sends the same request until accept says it was taken, for at
// most a minute.
func (c *client) retry(method, path, auth string, body any, accept func(answer) bool) (answer, error) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		a, err := c.do(method, path, auth, body)
		if err == nil && accept(a) {
			return a, nil
		}
		if time.Now().After(deadline) {
			return a, fmt.Errorf("%s %s never accepted: %v %d %s", method, path, err, a.status, a.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func decode(t *testing.T, a answer) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(a.body, &m), string(a.body))
	return m
}

// TestTwoReplicasOfEveryService runs two of each service on one
// PostgreSQL, NATS and ClickHouse. Both replicas start together (no
// migration applied twice); a revoked key is refused by both gateways at
// once; then, under load of span ingest, invocations and registry writes
// spread over both gateways, one of each service is killed (SIGKILL) and
// restarted: every span answered 202 is stored once, every invocation
// answered 200 has its trace stored once, every application created is
// there once.
func TestTwoReplicasOfEveryService(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ten service processes")
	}
	pg := pgtest.NewURL(t)
	nats := natstest.New(t)
	chURL := chtest.NewURL(t)
	llm := llmtest.New(t)
	reps := []*replica{startReplica(t, pg, nats.URL(), chURL, llm.URL), startReplica(t, pg, nats.URL(), chURL, llm.URL)}
	for _, r := range reps {
		r.writer = writertest.Start(t, nats.URL(), chURL)
	}
	for _, r := range reps {
		r.waitReady()
	}
	ctx := t.Context()

	t.Run("each migration applied once", func(t *testing.T) {
		conn, err := pgx.Connect(ctx, pg)
		require.NoError(t, err)
		defer conn.Close(ctx)
		for _, table := range []string{"gateway_schema_version", "registry_schema_version"} {
			var rows, versions int
			require.NoError(t, conn.QueryRow(ctx, "SELECT count(*), count(DISTINCT version_id) FROM "+table).Scan(&rows, &versions))
			assert.Greater(t, versions, 1, table)
			assert.Equal(t, versions, rows, "%s: a version recorded twice", table)
		}
		ch := openCH(t, chURL)
		var rows, versions uint64
		require.NoError(t, ch.QueryRow(ctx, "SELECT count(), uniqExact(version_id) FROM "+chspans.MigrationsTable).Scan(&rows, &versions))
		assert.Greater(t, versions, uint64(1))
		assert.Equal(t, versions, rows, "a ClickHouse migration recorded twice")
	})

	c := &client{gateways: []string{reps[0].gateway.URL, reps[1].gateway.URL}, http: &http.Client{Timeout: 30 * time.Second}}
	a, err := c.do("POST", "/api/admin/simple/accounts/", "Access "+adminKey,
		map[string]any{"accounts": map[string]any{"a": map[string]any{"user": map[string]any{"email": "replicas@example.com"}}}})
	require.NoError(t, err)
	require.Equal(t, 200, a.status, string(a.body))
	acct := decode(t, a)["accounts"].(map[string]any)["a"].(map[string]any)
	key := "ApiKey " + acct["api_keys"].(map[string]any)["key"].(string)

	t.Run("a revoked key is refused by every gateway at once", func(t *testing.T) {
		a, err := c.do("POST", "/api/keys/", key, map[string]any{"api_key": map[string]any{"name": "doomed"}})
		require.NoError(t, err)
		require.Equal(t, 200, a.status, string(a.body))
		created := decode(t, a)["api_key"].(map[string]any)
		doomed := "ApiKey " + created["key"].(string)
		probe := func(gw string) int {
			req, _ := http.NewRequest("POST", gw+"/api/spans/query", bytes.NewReader([]byte(`{}`)))
			req.Header.Set("Authorization", doomed)
			req.Header.Set("Content-Type", "application/json")
			res, err := c.http.Do(req)
			require.NoError(t, err)
			res.Body.Close()
			return res.StatusCode
		}
		for _, gw := range c.gateways {
			require.Equal(t, 200, probe(gw), "the key works, and is now cached, on %s", gw)
		}
		a, err = c.do("DELETE", "/api/keys/"+created["id"].(string), key, nil)
		require.NoError(t, err)
		require.Less(t, a.status, 300, string(a.body))
		// The cache TTL is 30 s; NOTIFY must beat it by far.
		for _, gw := range c.gateways {
			waitFor(t, "revocation reaches "+gw, 2*time.Second, func() bool { return probe(gw) == 401 })
		}
	})

	a, err = c.do("POST", "/api/simple/applications/", key, map[string]any{"application": map[string]any{
		"slug": "capitals", "name": "Capitals", "flags": map[string]any{"is_application": true},
		"data": map[string]any{"uri": "agenta:builtin:completion:v0", "parameters": map[string]any{"prompt": map[string]any{
			"messages":   []any{map[string]any{"role": "user", "content": "Capital of {{country}}?"}},
			"llm_config": map[string]any{"model": "gpt-4o-mini"}}}}}})
	require.NoError(t, err)
	require.Equal(t, 200, a.status, string(a.body))

	var (
		spansAcked atomic.Int64
		mu         sync.Mutex
		traces     []string // trace ids of invocations answered 200
		apps       []string // slugs of applications created
		seq        atomic.Int64
		stop       = make(chan struct{})
		errs       = make(chan error, 8)
		wg         sync.WaitGroup
	)
	loop := func(step func() error) {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := step(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	// Span ingest: a retry carries the same body, stored once by the stream.
	for range 2 {
		loop(func() error {
			i := seq.Add(1)
			var b bytes.Buffer
			for j := range 10 {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"trace_id":"%032x","span_id":"%016x","span_name":"s"}`, 1<<40+i, j+1)
			}
			body := json.RawMessage(`{"spans":[` + b.String() + `]}`)
			if _, err := c.retry("POST", "/api/tracing/spans/ingest", key, body, func(a answer) bool { return a.status == 202 }); err != nil {
				return err
			}
			spansAcked.Add(10)
			return nil
		})
	}
	// Invocations: each answered 200 must have its two spans stored once; a
	// failed one is not retried as the same invocation (a client cannot).
	loop(func() error {
		a, err := c.do("POST", "/services/completion/v0/invoke", key, map[string]any{
			"references": map[string]any{"application": map[string]any{"slug": "capitals"}},
			"data":       map[string]any{"inputs": map[string]any{"country": "France"}}})
		if err == nil && a.status == 200 {
			var out struct {
				TraceID string `json:"trace_id"`
			}
			if err := json.Unmarshal(a.body, &out); err != nil {
				return err
			}
			if !hexID.MatchString(out.TraceID) {
				return fmt.Errorf("invocation answered trace_id %q", out.TraceID)
			}
			mu.Lock()
			traces = append(traces, out.TraceID)
			mu.Unlock()
		} else {
			time.Sleep(50 * time.Millisecond)
		}
		return nil
	})
	// The ClickHouse database is this test's own: no project filter needed.
	// Registry writes: a retried create of the same slug answers 409 when
	// the first attempt was committed but its answer lost.
	loop(func() error {
		slug := fmt.Sprintf("app-%d", seq.Add(1))
		_, err := c.retry("POST", "/api/simple/applications/", key, map[string]any{"application": map[string]any{
			"slug": slug, "name": slug, "flags": map[string]any{"is_application": true},
			"data": map[string]any{"uri": "agenta:builtin:completion:v0"}}}, func(a answer) bool { return a.status == 200 || a.status == 409 })
		if err != nil {
			return err
		}
		mu.Lock()
		apps = append(apps, slug)
		mu.Unlock()
		return nil
	})
	progress := func() (int64, int, int) {
		mu.Lock()
		defer mu.Unlock()
		return spansAcked.Load(), len(traces), len(apps)
	}
	advance := func(what string, n int) {
		s0, i0, a0 := progress()
		waitFor(t, what, 60*time.Second, func() bool {
			s, i, a := progress()
			return s >= s0+int64(10*n) && i >= i0+n && a >= a0+n
		})
	}
	advance("load running on both replicas", 20)
	for _, s := range reps[0].all {
		s.Kill()
	}
	reps[0].writer.Kill()
	advance("load going on with one replica of each", 20)
	for _, s := range reps[0].all {
		s.Restart()
	}
	reps[0].writer.Restart()
	reps[0].waitReady()
	reps[0].writer.WaitReady()
	advance("load on both again", 20)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	ch := openCH(t, chURL)
	want := uint64(spansAcked.Load())
	var rows, distinct uint64
	waitFor(t, "every ingested span stored", 90*time.Second, func() bool {
		err := ch.QueryRow(ctx, "SELECT count(), uniqExact(trace_id, span_id) FROM spans FINAL WHERE deleted = 0 AND span_name = 's'").Scan(&rows, &distinct)
		return err == nil && distinct >= want
	})
	assert.Equal(t, want, distinct, "spans answered 202 stored")
	assert.Equal(t, want, rows, "and stored once")

	perTrace := map[string]uint64{}
	poll(60*time.Second, func() bool {
		// The ids are our own 32-hex answers (checked below), so they are
		// written into the statement: ClickHouse 18.16 does not take a
		// bound list.
		res, err := ch.Query(ctx, "SELECT trace_id, count() FROM spans FINAL WHERE deleted = 0 AND trace_id IN ('"+strings.Join(traces, "','")+"') GROUP BY trace_id")
		if err != nil {
			return false
		}
		defer res.Close()
		for res.Next() {
			var id string
			var n uint64
			if res.Scan(&id, &n) != nil {
				return false
			}
			perTrace[id] = n
		}
		return len(perTrace) == len(traces)
	})
	t.Logf("%d of %d invocation traces found", len(perTrace), len(traces))
	for _, id := range traces {
		assert.Equal(t, uint64(2), perTrace[id], "trace %s of an invocation answered 200: root and chat span, once each", id)
	}

	a, err = c.do("POST", "/api/simple/applications/query", key, map[string]any{})
	require.NoError(t, err)
	require.Equal(t, 200, a.status, string(a.body))
	seen := map[string]int{}
	for _, app := range decode(t, a)["applications"].([]any) {
		seen[app.(map[string]any)["slug"].(string)]++
	}
	for _, slug := range apps {
		assert.Equal(t, 1, seen[slug], "application %s", slug)
	}
	t.Logf("%d spans, %d invocations, %d applications accepted across a kill of one replica of each service", want, len(traces), len(apps))
}

func openCH(t *testing.T, url string) clickhouse.Conn {
	opts, err := clickhouse.ParseDSN(url)
	require.NoError(t, err)
	ch, err := clickhouse.Open(opts)
	require.NoError(t, err)
	t.Cleanup(func() { ch.Close() })
	return ch
}

// poll is waitFor without the failure: the caller asserts what it found.
func poll(timeout time.Duration, cond func() bool) {
	deadline := time.Now().Add(timeout)
	for !cond() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
}
