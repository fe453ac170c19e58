package evalrun_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/testutil/chtest"
	"github.com/assayhq/assay/pkg/testutil/llmtest"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/pkg/testutil/platformtest"
	"github.com/assayhq/assay/pkg/testutil/svctest"
	"github.com/assayhq/assay/pkg/testutil/writertest"
)

const adminKey = "evalrun-e2e-admin-key-0123456789"

// stack is the whole platform, every service a real binary (gateway,
// registry, tracing, writer and one or more runtimes, the first of which
// the gateway routes /services to) on real PostgreSQL, NATS and
// ClickHouse, with the local model server as the provider.
type stack struct {
	gateway string
	llm     *llmtest.Server
	nats    string
	reg, tr string
	workers []*svctest.Service
}

// common is a service's token variables (its own pairs only) and extra.
func common(service string, extra ...string) []string {
	return append(platformtest.TokenEnv(service), extra...)
}

// workerEnv makes a worker quick to notice a dead peer: jobs come back
// after 3 s without a heartbeat, claims after 4 s.
var workerEnv = []string{"RUNTIME_EVAL_ACK_WAIT=3s", "RUNTIME_EVAL_LEASE=4s", "RUNTIME_EVAL_RETRY_DELAY=500ms",
	"RUNTIME_EVAL_ACTIVE_EVERY=500ms", "RUNTIME_EVAL_DRAIN_TIMEOUT=5s"}

func startStack(t *testing.T, extra ...string) *stack {
	return startStackWith(t, nil, extra...)
}

// startStackWith also gives the registry extra settings.
func startStackWith(t *testing.T, registry []string, extra ...string) *stack {
	t.Helper()
	pg := pgtest.NewURL(t)
	nats := natstest.New(t)
	ch := chtest.NewURL(t)
	llm := llmtest.New(t)
	writertest.Start(t, nats.URL(), ch)
	s := &stack{llm: llm, nats: nats.URL()}
	reg := svctest.Start(t, svctest.Options{Pkg: "services/registry/cmd/registry", AddrVar: "REGISTRY_ADDR",
		Env: common("registry", append([]string{"REGISTRY_POSTGRES_URL=" + pg, "REGISTRY_NATS_URL=" + nats.URL(), "REGISTRY_LOG_LEVEL=warn",
			"REGISTRY_VAULT_KEY=MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="}, registry...)...)})
	tr := svctest.Start(t, svctest.Options{Pkg: "services/tracing/cmd/tracing", AddrVar: "TRACING_ADDR",
		Env: common("tracing", "TRACING_NATS_URL="+nats.URL(), "TRACING_CLICKHOUSE_URL="+ch, "TRACING_REGISTRY_URL="+reg.URL,
			"TRACING_OTLP_HTTP_ADDR=", "TRACING_OTLP_GRPC_ADDR=", "TRACING_LOG_LEVEL=warn")})
	s.reg, s.tr = reg.URL, tr.URL
	rt := s.worker(t, extra...)
	gw := svctest.Start(t, svctest.Options{Pkg: "services/gateway/cmd/gateway", AddrVar: "GATEWAY_ADDR",
		Env: common("gateway", "GATEWAY_POSTGRES_URL="+pg, "GATEWAY_ADMIN_KEY="+adminKey, "GATEWAY_REGISTRY_URL="+reg.URL,
			"GATEWAY_RUNTIME_URL="+rt.URL, "GATEWAY_TRACING_URL="+tr.URL, "GATEWAY_LOG_LEVEL=warn",
			"GATEWAY_METRICS_ADDR=")}) // off: its default port would be shared by the tests' gateways
	s.gateway = gw.URL
	return s
}

// worker starts one more runtime (a replica consuming the same jobs).
func (s *stack) worker(t *testing.T, extra ...string) *svctest.Service {
	t.Helper()
	return s.workerWith(t, workerEnv, extra...)
}

// workerWith starts a runtime with base instead of workerEnv: base
// without the ack wait and lease keeps the shipped defaults.
func (s *stack) workerWith(t *testing.T, base []string, extra ...string) *svctest.Service {
	t.Helper()
	env := common("runtime", append([]string{"RUNTIME_NATS_URL=" + s.nats, "RUNTIME_REGISTRY_URL=" + s.reg, "RUNTIME_TRACING_URL=" + s.tr,
		"RUNTIME_LOG_LEVEL=warn", "RUNTIME_LLM_BASE_URLS=openai=" + s.llm.URL, "OPENAI_API_KEY=sk-test-env",
		"RUNTIME_EGRESS_ALLOW=" + s.llm.Addr()},
		append(append([]string{}, base...), extra...)...)...)
	w := svctest.Start(t, svctest.Options{Pkg: "services/runtime/cmd/runtime", AddrVar: "RUNTIME_ADDR", Env: env})
	s.workers = append(s.workers, w)
	// The worker's log, when the test failed (or EVALRUN_E2E_LOGS is
	// set, e.g. to read a -race build's reports), before the stack stops.
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("EVALRUN_E2E_LOGS") != "" {
			t.Logf("runtime %s log:\n%s", w.URL, w.Log())
		}
	})
	return w
}

func (s *stack) account(t *testing.T, email string) string {
	t.Helper()
	r := s.do(t, "POST", "/api/admin/simple/accounts/", "Access "+adminKey,
		map[string]any{"accounts": map[string]any{"a": map[string]any{"user": map[string]any{"email": email}}}})
	require.Equal(t, 200, r.status, string(r.body))
	return "ApiKey " + r.obj(t, "accounts", "a", "api_keys")["key"].(string)
}

type answer struct {
	status int
	body   []byte
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(a.body, &m), string(a.body))
	return m
}

func (a answer) obj(t *testing.T, path ...string) map[string]any {
	t.Helper()
	m := a.json(t)
	for _, k := range path {
		next, ok := m[k].(map[string]any)
		require.True(t, ok, "%s in %s", k, string(a.body))
		m = next
	}
	return m
}

func (s *stack) do(t *testing.T, method, path, auth string, body any) answer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.gateway+path, rd)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", auth)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return answer{status: res.StatusCode, body: b}
}

func (s *stack) ok(t *testing.T, method, path, key string, body any) answer {
	t.Helper()
	r := s.do(t, method, path, key, body)
	require.Equal(t, 200, r.status, "%s %s: %s", method, path, string(r.body))
	return r
}

// ---- artifacts

type testset struct {
	id, revisionID string
	testcaseIDs    []string
}

func (s *stack) testset(t *testing.T, key, slug string, rows []map[string]any) testset {
	t.Helper()
	tcs := []any{}
	for _, r := range rows {
		tcs = append(tcs, map[string]any{"data": r})
	}
	ts := s.ok(t, "POST", "/api/simple/testsets/", key, map[string]any{"testset": map[string]any{
		"slug": slug, "name": slug, "data": map[string]any{"testcases": tcs}}}).obj(t, "testset")
	out := testset{id: ts["id"].(string), revisionID: ts["revision_id"].(string)}
	for _, id := range ts["data"].(map[string]any)["testcase_ids"].([]any) {
		out.testcaseIDs = append(out.testcaseIDs, id.(string))
	}
	return out
}

// workflow creates a simple application or evaluator and returns its
// id and revision id.
func (s *stack) workflow(t *testing.T, key, kind, slug string, data map[string]any) (string, string) {
	t.Helper()
	flags := map[string]any{"is_" + kind: true}
	w := s.ok(t, "POST", "/api/simple/"+kind+"s/", key, map[string]any{kind: map[string]any{
		"slug": slug, "name": slug, "flags": flags, "data": data}}).obj(t, kind)
	return w["id"].(string), w["revision_id"].(string)
}

var completion = map[string]any{"uri": "agenta:builtin:completion:v0", "parameters": map[string]any{"prompt": map[string]any{
	"messages": []any{
		map[string]any{"role": "system", "content": "You answer in one word."},
		map[string]any{"role": "user", "content": "What is the capital of {{country}}?"},
	},
	"llm_config": map[string]any{"model": "gpt-4o-mini"},
}}}

func mock(behaviour string, kwargs map[string]any) map[string]any {
	p := map[string]any{"key": behaviour}
	if kwargs != nil {
		p["kwargs"] = kwargs
	}
	return map[string]any{"uri": "agenta:custom:mock:v0", "parameters": p}
}

var exactMatch = map[string]any{"uri": "agenta:builtin:auto_exact_match:v0", "parameters": map[string]any{"correct_answer_key": "expected"}}

// ---- runs

// evaluate creates and starts a simple evaluation and returns its run id.
func (s *stack) evaluate(t *testing.T, key string, data map[string]any, flags map[string]any) string {
	t.Helper()
	ev := map[string]any{"name": "e2e", "data": data}
	if flags != nil {
		ev["flags"] = flags
	}
	e := s.ok(t, "POST", "/api/simple/evaluations/", key, map[string]any{"evaluation": ev}).obj(t, "evaluation")
	require.NotEmpty(t, e["id"])
	return e["id"].(string)
}

func (s *stack) run(t *testing.T, key, id string) map[string]any {
	t.Helper()
	return s.ok(t, "GET", "/api/evaluations/runs/"+id, key, nil).obj(t, "run")
}

// waitRun polls the run until its status is one of want.
func (s *stack) waitRun(t *testing.T, key, id string, timeout time.Duration, want ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		r := s.run(t, key, id)
		for _, w := range want {
			if r["status"] == w {
				return r
			}
		}
		if time.Now().After(deadline) {
			prog := s.do(t, "GET", "/api/evaluations/runs/"+id+"/progress", key, nil)
			t.Fatalf("run %s is %v after %s, want %v; progress %s", id, r["status"], timeout, want, prog.body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type result struct {
	ID         string          `json:"id"`
	ScenarioID string          `json:"scenario_id"`
	StepKey    string          `json:"step_key"`
	RepeatIdx  int             `json:"repeat_idx"`
	Status     string          `json:"status"`
	TraceID    string          `json:"trace_id"`
	TestcaseID string          `json:"testcase_id"`
	HashID     string          `json:"hash_id"`
	Error      json.RawMessage `json:"error"`
	Meta       struct {
		Worker     string `json:"worker"`
		Cache      string `json:"cache"`
		ModelCalls struct {
			Made   int     `json:"made"`
			Cached int     `json:"cached"`
			Cost   float64 `json:"cost"`
		} `json:"model_calls"`
	} `json:"meta"`
}

func (s *stack) results(t *testing.T, key, runID string) []result {
	t.Helper()
	var all []result
	s.pages(t, key, "/api/evaluations/results/query", "result", runID, func(b []byte) {
		var out struct {
			Results []result `json:"results"`
		}
		require.NoError(t, json.Unmarshal(b, &out))
		all = append(all, out.Results...)
	})
	return all
}

func (s *stack) scenarios(t *testing.T, key, runID string) []map[string]any {
	t.Helper()
	var all []map[string]any
	s.pages(t, key, "/api/evaluations/scenarios/query", "scenario", runID, func(b []byte) {
		var out struct {
			Scenarios []map[string]any `json:"scenarios"`
		}
		require.NoError(t, json.Unmarshal(b, &out))
		all = append(all, out.Scenarios...)
	})
	return all
}

// pages reads a records query of one run page after page (the answer's
// windowing is the next request's).
func (s *stack) pages(t *testing.T, key, path, filter, runID string, read func([]byte)) {
	t.Helper()
	var win any = map[string]any{"limit": 1000}
	for range 100 {
		r := s.ok(t, "POST", path, key, map[string]any{filter: map[string]any{"run_id": runID}, "windowing": win})
		read(r.body)
		var next struct {
			Windowing json.RawMessage `json:"windowing"`
		}
		require.NoError(t, json.Unmarshal(r.body, &next))
		if len(next.Windowing) == 0 || string(next.Windowing) == "null" {
			return
		}
		win = next.Windowing
	}
	t.Fatalf("%s: more than 100 pages", path)
}

// byStep groups results by step key.
func byStep(rs []result) map[string][]result {
	out := map[string][]result{}
	for _, r := range rs {
		out[r.StepKey] = append(out[r.StepKey], r)
	}
	return out
}

// stepKey finds the key of the run's step of a type whose references
// hold revisionID (its *_revision), or the first of the type when
// revisionID is "".
func stepKey(t *testing.T, run map[string]any, typ, revisionID string) string {
	t.Helper()
	for _, st := range run["data"].(map[string]any)["steps"].([]any) {
		m := st.(map[string]any)
		if m["type"] != typ {
			continue
		}
		if revisionID == "" {
			return m["key"].(string)
		}
		for k, ref := range m["references"].(map[string]any) {
			if strings.HasSuffix(k, "_revision") && ref.(map[string]any)["id"] == revisionID {
				return m["key"].(string)
			}
		}
	}
	t.Fatalf("no %s step of revision %q in %v", typ, revisionID, run["data"])
	return ""
}

// rootSpan waits for a trace's root span.
func (s *stack) rootSpan(t *testing.T, key, traceID string) map[string]any {
	t.Helper()
	spans := s.roots(t, key, []any{map[string]any{"field": "trace_id", "value": traceID}}, 1, 30*time.Second)
	return spans[0]
}

// roots polls the tracing API for root spans matching conditions until
// there are at least n (or the timeout), and returns them all.
func (s *stack) roots(t *testing.T, key string, conds []any, n int, timeout time.Duration) []map[string]any {
	t.Helper()
	conds = append(conds, map[string]any{"field": "parent_id", "operator": "is", "value": nil})
	deadline := time.Now().Add(timeout)
	for {
		r := s.ok(t, "POST", "/api/spans/query", key, map[string]any{"filtering": map[string]any{"conditions": conds},
			"windowing": map[string]any{"limit": 10000}})
		var out struct {
			Spans []map[string]any `json:"spans"`
		}
		require.NoError(t, json.Unmarshal(r.body, &out))
		if len(out.Spans) >= n || time.Now().After(deadline) {
			require.GreaterOrEqual(t, len(out.Spans), n, "root spans matching %v", conds)
			return out.Spans
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func ag(span map[string]any, path string) any {
	var v any = span["attributes"].(map[string]any)["ag"]
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// refIDs are the ids of a span's references by key.
func refIDs(span map[string]any) map[string]string {
	out := map[string]string{}
	list, _ := span["references"].([]any)
	for _, e := range list {
		m := e.(map[string]any)
		k, _ := m["attributes"].(map[string]any)["key"].(string)
		id, _ := m["id"].(string)
		out[k] = id
	}
	return out
}

func countries(n int) []map[string]any {
	names := []string{"France", "Italy", "Spain", "Peru", "Chile", "Japan", "Kenya", "Nepal", "Cuba", "Fiji"}
	out := []map[string]any{}
	for i := range n {
		c := names[i%len(names)]
		if i >= len(names) {
			c = fmt.Sprintf("%s%d", c, i)
		}
		out = append(out, map[string]any{"country": c, "expected": "echo: What is the capital of " + c + "?"})
	}
	return out
}

func sorted(m map[string]int) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(out)
	return out
}

// invokeApp runs the app revision on inputs through the gateway and
// returns the trace id, once the trace is stored.
func (s *stack) invokeApp(t *testing.T, key, appRev, country string) string {
	t.Helper()
	r := s.ok(t, "POST", "/services/completion/v0/invoke", key, map[string]any{
		"references": map[string]any{"application_revision": map[string]any{"id": appRev}},
		"data":       map[string]any{"inputs": map[string]any{"country": country}}})
	tid := r.json(t)["trace_id"].(string)
	s.rootSpan(t, key, tid)
	return tid
}

// saveQuery saves a query of invocation traces and returns its revision.
func (s *stack) saveQuery(t *testing.T, key, slug string) string {
	t.Helper()
	q := s.ok(t, "POST", "/api/simple/queries/", key, map[string]any{"query": map[string]any{"slug": slug,
		"data": map[string]any{"filtering": map[string]any{"conditions": []any{map[string]any{"field": "trace_type", "value": "invocation"}}}}}}).obj(t, "query")
	rev, _ := q["revision_id"].(string)
	require.NotEmpty(t, rev, "%v", q)
	return rev
}

// phases reads the workers' runtime_eval_phase_seconds sums: the job time
// spent in each phase so far, summed over the workers.
func (s *stack) phases(t *testing.T) map[string]float64 {
	t.Helper()
	sums := map[string]float64{}
	for _, w := range s.workers {
		res, err := http.Get(w.MetricsURL + "/metrics")
		require.NoError(t, err)
		page, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		for _, line := range strings.Split(string(page), "\n") {
			rest, ok := strings.CutPrefix(line, `runtime_eval_phase_seconds_sum{phase="`)
			if !ok {
				continue
			}
			phase, value, _ := strings.Cut(rest, `"} `)
			v, err := strconv.ParseFloat(value, 64)
			require.NoError(t, err, line)
			sums[phase] += v
		}
	}
	return sums
}

// phasesSince formats the job time by phase since before (phases), the
// largest first.
func (s *stack) phasesSince(t *testing.T, before map[string]float64) string {
	t.Helper()
	now := s.phases(t)
	names := make([]string, 0, len(now))
	for p := range now {
		names = append(names, p)
	}
	sort.Slice(names, func(i, j int) bool { return now[names[i]]-before[names[i]] > now[names[j]]-before[names[j]] })
	var parts []string
	for _, p := range names {
		parts = append(parts, fmt.Sprintf("%s %.2f s", p, now[p]-before[p]))
	}
	return strings.Join(parts, ", ")
}
