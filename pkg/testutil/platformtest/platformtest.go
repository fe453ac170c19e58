// Package platformtest runs the whole platform for a test, every service a
// real binary (gateway, registry, runtime, tracing, writer) on real
// PostgreSQL, NATS and ClickHouse, with the local model server (llmtest) as
// the provider, and provisions accounts through the admin route. Clients
// that only speak HTTP (the CLI, the end-to-end tests of a lane) test
// against it exactly as a user reaches a deployment: through the gateway.
package platformtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/assayhq/assay/pkg/testutil/chtest"
	"github.com/assayhq/assay/pkg/testutil/freeport"
	"github.com/assayhq/assay/pkg/testutil/llmtest"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/pkg/testutil/svctest"
	"github.com/assayhq/assay/pkg/testutil/writertest"
)

const (
	// AdminKey is the gateway's admin key (Authorization: Access <AdminKey>).
	AdminKey = "platformtest-admin-key-0123456789"
	// vaultKey is the registry's 32-byte vault key, base64.
	vaultKey = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
)

// Pairs are the service-to-service calls, caller first: each pair has a
// token of its own, which only its two services hold (scripts/platform.sh,
// docker-compose.yml and the Helm chart give them out the same way).
var Pairs = [][2]string{
	{"gateway", "registry"}, {"gateway", "runtime"}, {"gateway", "tracing"},
	{"runtime", "registry"}, {"runtime", "tracing"},
	{"tracing", "registry"}, {"registry", "tracing"},
}

// PairToken is the token the caller sends the callee in these tests.
func PairToken(caller, callee string) string {
	return "platformtest-" + caller + "-to-" + callee + "-token"
}

// TokenEnv is the token variables of one service: <SERVICE>_TOKEN_TO_<CALLEE>
// for each service it calls, <SERVICE>_TOKEN_FROM_<CALLER> for each that
// calls it, and nothing of the pairs it is not part of.
func TokenEnv(service string) []string {
	var env []string
	for _, p := range Pairs {
		switch service {
		case p[0]:
			env = append(env, strings.ToUpper(p[0])+"_TOKEN_TO_"+strings.ToUpper(p[1])+"="+PairToken(p[0], p[1]))
		case p[1]:
			env = append(env, strings.ToUpper(p[1])+"_TOKEN_FROM_"+strings.ToUpper(p[0])+"="+PairToken(p[0], p[1]))
		}
	}
	return env
}

// Options add variables to one service's environment ("K=V"), for a test
// that needs a setting other than the defaults below.
type Options struct {
	Registry, Runtime, Tracing, Gateway, Writer []string
	// EgressAllow adds destinations (host:port, address or network) to the
	// runtime's RUNTIME_EGRESS_ALLOW, which always admits the model server:
	// a test's own local servers are private addresses the runtime
	// otherwise refuses.
	EgressAllow []string
}

// Platform is the running stack.
type Platform struct {
	// URL is the gateway's base URL, the only address a client needs.
	URL string
	// LLM is the model server every provider call goes to.
	LLM *llmtest.Server
	// The services, for a test that restarts or kills one.
	Gateway, Registry, Runtime, Tracing *svctest.Service
	Writer                              *writertest.Writer
	NATSURL                             string
	// PostgresURL (the gateway's and the registry's database) and
	// ClickHouseURL, for a test that checks what the stores hold.
	PostgresURL, ClickHouseURL string
}

// Start runs the platform; everything stops when the test ends. The
// evaluation settings (REGISTRY_NATS_URL for the registry's job publishing,
// RUNTIME_TRACING_URL for the runtime's evaluation worker) are always set:
// a service built before it reads them ignores an unknown variable.
func Start(t testing.TB, opts ...Options) *Platform {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	pg := pgtest.NewURL(t)
	nats := natstest.New(t)
	ch := chtest.NewURL(t)
	llm := llmtest.New(t)
	w := writertest.Start(t, nats.URL(), ch, o.Writer...)
	join := func(service string, a []string, b []string) []string {
		return append(append(TokenEnv(service), a...), b...)
	}
	// The registry and tracing call each other (saved queries, an export's
	// outputs; tracing's project checks): tracing's address is chosen
	// before the registry starts.
	trAddr := freeport.Addr(t)
	reg := svctest.Start(t, svctest.Options{Pkg: "services/registry/cmd/registry", AddrVar: "REGISTRY_ADDR",
		Env: join("registry", []string{"REGISTRY_POSTGRES_URL=" + pg, "REGISTRY_LOG_LEVEL=warn", "REGISTRY_VAULT_KEY=" + vaultKey,
			"REGISTRY_NATS_URL=" + nats.URL(), "REGISTRY_TRACING_URL=http://" + trAddr}, o.Registry)})
	tr := svctest.Start(t, svctest.Options{Pkg: "services/tracing/cmd/tracing", AddrVar: "TRACING_ADDR", Addr: trAddr,
		Env: join("tracing", []string{"TRACING_NATS_URL=" + nats.URL(), "TRACING_POSTGRES_URL=" + pg, "TRACING_CLICKHOUSE_URL=" + ch, "TRACING_REGISTRY_URL=" + reg.URL,
			"TRACING_OTLP_HTTP_ADDR=", "TRACING_OTLP_GRPC_ADDR=", "TRACING_LOG_LEVEL=warn"}, o.Tracing)})
	rt := svctest.Start(t, svctest.Options{Pkg: "services/runtime/cmd/runtime", AddrVar: "RUNTIME_ADDR",
		Env: join("runtime", []string{"RUNTIME_NATS_URL=" + nats.URL(), "RUNTIME_REGISTRY_URL=" + reg.URL, "RUNTIME_TRACING_URL=" + tr.URL,
			"RUNTIME_LOG_LEVEL=warn", "RUNTIME_LLM_BASE_URLS=openai=" + llm.URL, "OPENAI_API_KEY=sk-test-env",
			"RUNTIME_EGRESS_ALLOW=" + strings.Join(append([]string{llm.Addr()}, o.EgressAllow...), ",")}, o.Runtime)})
	gw := svctest.Start(t, svctest.Options{Pkg: "services/gateway/cmd/gateway", AddrVar: "GATEWAY_ADDR",
		Env: join("gateway", []string{"GATEWAY_POSTGRES_URL=" + pg, "GATEWAY_ADMIN_KEY=" + AdminKey, "GATEWAY_REGISTRY_URL=" + reg.URL,
			"GATEWAY_RUNTIME_URL=" + rt.URL, "GATEWAY_TRACING_URL=" + tr.URL, "GATEWAY_LOG_LEVEL=warn"}, o.Gateway)})
	return &Platform{URL: gw.URL, LLM: llm, Gateway: gw, Registry: reg, Runtime: rt, Tracing: tr, Writer: w, NATSURL: nats.URL(),
		PostgresURL: pg, ClickHouseURL: ch}
}

// Account provisions a user with an organization, workspace and project and
// returns the raw API key (without the "ApiKey " scheme).
func (p *Platform) Account(t testing.TB, email string) string {
	t.Helper()
	status, body := p.Do(t, "POST", "/api/admin/simple/accounts/", "Access "+AdminKey,
		map[string]any{"accounts": map[string]any{"a": map[string]any{"user": map[string]any{"email": email}}}})
	if status != http.StatusOK {
		t.Fatalf("platformtest: provision %s: %d %s", email, status, body)
	}
	var out struct {
		Accounts map[string]struct {
			APIKeys struct {
				Key string `json:"key"`
			} `json:"api_keys"`
		} `json:"accounts"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Accounts["a"].APIKeys.Key == "" {
		t.Fatalf("platformtest: provision %s: no key in %s (%v)", email, body, err)
	}
	return out.Accounts["a"].APIKeys.Key
}

// Do sends a JSON request through the gateway with the given Authorization
// header and returns the status and body.
func (p *Platform) Do(t testing.TB, method, path, auth string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, p.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("platformtest: %s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

// MustJSON is Do for a request that must answer 200, decoded.
func (p *Platform) MustJSON(t testing.TB, method, path, key string, body any) map[string]any {
	t.Helper()
	status, b := p.Do(t, method, path, "ApiKey "+key, body)
	if status != http.StatusOK {
		t.Fatalf("platformtest: %s %s: %d %s", method, path, status, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("platformtest: %s %s: %v: %s", method, path, err, b)
	}
	return m
}

// String is fmt.Sprint for the platform's address, for logs.
func (p *Platform) String() string { return fmt.Sprintf("platform at %s", p.URL) }
