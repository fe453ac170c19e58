package apiclient_test

// TestReadRoutesDecode starts the whole platform, stores a little of
// everything (traces, annotations, testsets, workflows, environments,
// queries, evaluations), calls every read route of the public OpenAPI
// document (each GET, and each POST …/query) through the gateway, and
// decodes each real answer with the client ogen generated from that
// document. ogen's decoders check the types, the required fields and the
// status codes the document gives, so an answer whose shape drifts from its
// description (spans documented as a list but sent keyed by name) fails
// here, naming the route.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/apidoc"
	"github.com/assayhq/assay/pkg/testutil/apiclient"
	"github.com/assayhq/assay/pkg/testutil/platformtest"
)

type m = map[string]any

// readOp is one read operation of the document; ok2xx is false for the
// routes documented with no success answer (a GET only there to answer
// 405 to clients that probe it).
type readOp struct {
	method, path, id string
	ok2xx            bool
}

func readOps(t *testing.T) []readOp {
	raw, err := apidoc.Document()
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	var ops []readOp
	for p, methods := range d.Paths {
		for meth, rawOp := range methods {
			if meth != "get" && !(meth == "post" && strings.HasSuffix(p, "/query")) {
				continue
			}
			var op struct {
				OperationID string                     `json:"operationId"`
				Responses   map[string]json.RawMessage `json:"responses"`
			}
			if err := json.Unmarshal(rawOp, &op); err != nil {
				t.Fatal(err)
			}
			ok2xx := false
			for code := range op.Responses {
				ok2xx = ok2xx || code[0] == '2'
			}
			ops = append(ops, readOp{strings.ToUpper(meth), p, op.OperationID, ok2xx})
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].path+ops[i].method < ops[j].path+ops[j].method })
	return ops
}

// world is a project with something of each kind stored.
type world struct {
	p   *platformtest.Platform
	key string
	// ids fills the path parameters of a route: the first pattern that
	// matches the documented path gives the values, in order.
	ids []pathIDs
}

type pathIDs struct {
	re    *regexp.Regexp
	vals  []string
	query string
	body  any
}

func (w *world) post(t *testing.T, path string, body any) m {
	t.Helper()
	status, b := w.p.Do(t, "POST", path, "ApiKey "+w.key, body)
	var out m
	if status/100 != 2 || json.Unmarshal(b, &out) != nil {
		t.Fatalf("POST %s: %d %s", path, status, b)
	}
	return out
}

func (w *world) fill(pattern string, vals ...string) {
	w.ids = append(w.ids, pathIDs{re: regexp.MustCompile(pattern), vals: vals})
}

// query gives the routes of pattern a query string.
func (w *world) query(pattern, query string) {
	w.ids = append(w.ids, pathIDs{re: regexp.MustCompile(pattern), query: query})
}

// body gives the POST routes of pattern a body (default {}).
func (w *world) body(pattern string, body any) {
	w.ids = append(w.ids, pathIDs{re: regexp.MustCompile(pattern), body: body})
}

// getJSON is a GET that must answer 200.
func (w *world) getJSON(t *testing.T, path string) any {
	t.Helper()
	status, b := w.p.Do(t, "GET", path, "ApiKey "+w.key, nil)
	var out any
	if status != http.StatusOK || json.Unmarshal(b, &out) != nil {
		t.Fatalf("GET %s: %d %s", path, status, b)
	}
	return out
}

// find returns the first object in v (depth first, lists in order) that
// has every key of keys.
func find(v any, keys ...string) m {
	switch x := v.(type) {
	case m:
		all := true
		for _, k := range keys {
			_, ok := x[k]
			all = all && ok
		}
		if all {
			return x
		}
		ks := make([]string, 0, len(x))
		for k := range x {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			if f := find(x[k], keys...); f != nil {
				return f
			}
		}
	case []any:
		for _, e := range x {
			if f := find(e, keys...); f != nil {
				return f
			}
		}
	}
	return nil
}

// firstKey is the key of the first item a catalog list route answers.
func (w *world) firstKey(t *testing.T, path string) string {
	t.Helper()
	f := find(w.getJSON(t, path), "key")
	if f == nil {
		t.Fatalf("GET %s lists no item with a key", path)
	}
	return str(t, f, "key")
}

func get(t *testing.T, v any, path ...string) any {
	t.Helper()
	for _, k := range path {
		mm, ok := v.(m)
		if !ok {
			t.Fatalf("no object at %q in %v", k, v)
		}
		v = mm[k]
	}
	return v
}

func list(t *testing.T, v any, path ...string) []any {
	t.Helper()
	l, ok := get(t, v, path...).([]any)
	if !ok || len(l) == 0 {
		t.Fatalf("no list at %v in %v", path, v)
	}
	return l
}

func str(t *testing.T, v any, path ...string) string {
	t.Helper()
	s, ok := get(t, v, path...).(string)
	if !ok || s == "" {
		t.Fatalf("no string at %v in %v", path, v)
	}
	return s
}

// artifact creates a simple <e>, fills its artifact, variant and
// revision routes and returns the revision id.
func (w *world) artifact(t *testing.T, plural, key, slug string, data m) string {
	t.Helper()
	a := w.post(t, "/api/simple/"+plural, m{key: m{"slug": slug, "name": slug, "data": data}})
	id := str(t, a, key, "id")
	rev := w.post(t, "/api/"+plural+"/revisions/retrieve", m{key + "_ref": m{"id": id}})
	w.fill(`^/api/simple/`+plural+`/\{id\}`, id)
	w.fill(`^/api/`+plural+`/revisions/\{id\}`, str(t, rev, key+"_revision", "id"))
	w.fill(`^/api/`+plural+`/variants/\{id\}`, str(t, rev, key+"_revision", key+"_variant_id"))
	w.fill(`^/api/`+plural+`/\{id\}`, id)
	return str(t, rev, key+"_revision", "id")
}

func seed(t *testing.T) *world {
	p := platformtest.Start(t)
	w := &world{p: p, key: p.Account(t, "reader@example.com")}

	// A trace of two spans, with inputs, outputs, tokens and costs.
	traceID := strings.ReplaceAll(uuid.NewString(), "-", "")
	start := time.Now().UTC().Add(-time.Minute)
	span := func(id, parent, name string, attrs m) m {
		s := m{"trace_id": traceID, "span_id": id, "span_name": name, "span_kind": "SPAN_KIND_CLIENT",
			"start_time": start.Format(time.RFC3339Nano), "end_time": start.Add(time.Second).Format(time.RFC3339Nano),
			"status_code": "STATUS_CODE_OK", "attributes": attrs}
		if parent != "" {
			s["parent_id"] = parent
		}
		return s
	}
	w.post(t, "/api/tracing/spans/ingest", m{"spans": []any{
		span("1000000000000001", "", "agent", m{"ag": m{"type": m{"trace": "invocation", "span": "agent"},
			"data": m{"inputs": m{"q": "hi"}, "outputs": "hello"}}, "session.id": "s-1", "user.id": "u-1"}),
		span("1000000000000002", "1000000000000001", "chat", m{"ag": m{"type": m{"span": "chat"},
			"data":    m{"inputs": m{"prompt": []any{m{"role": "user", "content": "hi"}}}, "outputs": m{"completion": []any{m{"role": "assistant", "content": "hello"}}}},
			"meta":    m{"request": m{"model": "gpt-4o-mini"}},
			"metrics": m{"unit": m{"tokens": m{"prompt": 3, "completion": 2, "total": 5}}}}}),
	}})
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := w.p.MustJSON(t, "GET", "/api/tracing/traces/"+traceID, w.key, nil)
		if c, _ := got["count"].(float64); c > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("trace %s not readable: %v", traceID, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	w.fill(`^/api/spans/\{trace_id\}/\{span_id\}`, traceID, "1000000000000002")
	w.fill(`^/api/(tracing/)?traces/\{id\}`, traceID)

	// Registry artifacts of each family.
	ts := w.post(t, "/api/simple/testsets", m{"testset": m{"slug": "qa", "name": "QA",
		"data": m{"testcases": []any{m{"data": m{"q": "hi", "correct_answer": "hello"}}}}}})
	tsID := str(t, ts, "testset", "id")
	tsRev := w.post(t, "/api/testsets/revisions/retrieve", m{"testset_ref": m{"id": tsID}})
	w.fill(`^/api/simple/testsets/\{id\}`, tsID)
	w.fill(`^/api/testsets/revisions/\{id\}`, str(t, tsRev, "testset_revision", "id"))
	w.fill(`^/api/testsets/variants/\{id\}`, str(t, tsRev, "testset_revision", "testset_variant_id"))
	w.fill(`^/api/testsets/\{id\}`, tsID)
	tcs := w.post(t, "/api/testcases/query", m{"testset_id": tsID})
	l, _ := tcs["testcases"].([]any)
	if len(l) == 0 {
		t.Fatalf("testset %s has no testcases: %v", tsID, tcs)
	}
	tcID := str(t, l[0], "id")
	w.fill(`^/api/testcases/\{id\}`, tcID)
	w.query(`^/api/testcases$`, "testcase_id="+tcID)
	w.body(`^/api/testcases/query$`, m{"testset_id": tsID})

	sec := w.post(t, "/api/secrets", m{"secret": m{"kind": "provider_key", "data": m{"kind": "openai", "provider": m{"key": "sk-test"}}}})
	w.fill(`^/api/secrets/\{id\}`, str(t, find(sec, "id"), "id"))

	prompt := m{"uri": "agenta:builtin:completion:v0", "parameters": m{"prompt": m{"messages": []any{m{"role": "user", "content": "{{q}}"}},
		"llm_config": m{"model": "gpt-4o-mini"}}}}
	appRev := w.artifact(t, "applications", "application", "bot", prompt)
	w.artifact(t, "workflows", "workflow", "flow", prompt)
	evRev := w.artifact(t, "evaluators", "evaluator", "exact", m{"uri": "agenta:builtin:auto_exact_match:v0", "parameters": m{"correct_answer_key": "correct_answer"}})
	w.artifact(t, "environments", "environment", "canary", nil)
	w.artifact(t, "queries", "query", "recent", m{"filtering": m{"conditions": []any{m{"field": "trace_type", "operator": "is", "value": "invocation"}}}})
	link := m{"trace_id": traceID, "span_id": "1000000000000001"}
	st := w.post(t, "/api/simple/traces", m{"trace": m{"data": m{"outputs": m{"score": 1}}, "links": m{"invocation": link}}})
	w.fill(`^/api/simple/traces/\{id\}`, str(t, st, "trace", "trace_id"))
	an := w.post(t, "/api/annotations", m{"annotation": m{"data": m{"outputs": m{"success": true}}, "links": m{"invocation": link},
		"references": m{"evaluator": m{"slug": "exact"}}}})
	w.fill(`^/api/annotations/\{id\}`, str(t, an, "annotation", "trace_id"))
	inv := w.post(t, "/api/invocations", m{"invocation": m{"data": m{"inputs": m{"q": "x"}, "outputs": "y"}, "references": m{"application": m{"slug": "bot"}}}})
	w.fill(`^/api/invocations/\{id\}`, str(t, inv, "invocation", "trace_id"))

	// An evaluation run the SDK's way: one scenario, its input, app and
	// evaluator cells, the app cell pointing at the trace.
	run := w.post(t, "/api/simple/evaluations", m{"evaluation": m{"name": "run", "data": m{"status": "running",
		"testset_steps": m{str(t, tsRev, "testset_revision", "id"): "custom"}, "application_steps": m{appRev: "custom"},
		"evaluator_steps": m{evRev: "custom"}}}})
	runID := str(t, run, "evaluation", "id")
	sc := w.post(t, "/api/simple/evaluations/"+runID+"/scenarios/add", m{"count": 1})
	scID := str(t, find(sc, "run_id"), "id")
	steps := list(t, w.getJSON(t, "/api/evaluations/runs/"+runID), "run", "data", "steps")
	var results []any
	for _, st := range steps {
		cell := m{"run_id": runID, "scenario_id": scID, "step_key": str(t, st, "key"), "repeat_idx": 0, "status": "success"}
		switch str(t, st, "type") {
		case "input":
			cell["testcase_id"] = tcID
		default:
			cell["trace_id"] = traceID
		}
		results = append(results, cell)
	}
	res := w.post(t, "/api/simple/evaluations/"+runID+"/populate", m{"results": results})
	w.fill(`^/api/(simple/evaluations|evaluations/runs)/\{id\}`, runID)
	w.fill(`^/api/evaluations/scenarios/\{id\}`, scID)
	w.fill(`^/api/evaluations/results/\{id\}`, str(t, find(res, "step_key"), "id"))
	q := w.post(t, "/api/simple/queues", m{"queue": m{"name": "review", "data": m{"kind": "traces", "evaluators": []string{evRev}}}})
	w.fill(`^/api/(simple|evaluations)/queues/\{id\}`, str(t, q, "queue", "id"))

	// The account's organization, workspace and project.
	acct := find(w.getJSON(t, "/api/projects"), "organization_id", "workspace_id")
	if acct == nil {
		t.Fatal("GET /api/projects names no organization and workspace")
	}
	w.fill(`^/api/projects/\{id\}`, str(t, acct, "id"))
	w.fill(`^/api/organizations/\{id\}`, str(t, acct, "organization_id"))
	w.fill(`^/api/workspaces/\{id\}`, str(t, acct, "workspace_id"))

	// Catalog keys, as the catalog lists them.
	for _, e := range []string{"applications", "evaluators", "workflows"} {
		key := w.firstKey(t, "/api/"+e+"/catalog/templates")
		preset := w.firstKey(t, "/api/"+e+"/catalog/templates/"+key+"/presets")
		w.fill(`^/api/`+e+`/catalog/templates/\{key\}`, key, preset)
	}
	w.fill(`^/api/evaluators/catalog/types/\{key\}`, w.firstKey(t, "/api/evaluators/catalog/types"))
	w.fill(`^/api/workflows/catalog/types/\{key\}`, w.firstKey(t, "/api/workflows/catalog/types"))
	w.fill(`^/api/workflows/catalog/harnesses/\{key\}`, w.firstKey(t, "/api/workflows/catalog/harnesses"))
	w.fill(`^/services/\{key\}/\{version\}/health`, "completion", "v0")

	// Routes that read by query parameters.
	w.query(`^/api/spans$`, "trace_id="+traceID)
	w.query(`^/api/traces$`, "trace_id="+traceID)
	return w
}

var param = regexp.MustCompile(`\{[a-z_]+\}`)

// do sends op with the world's ids and returns the answer.
func (w *world) do(t *testing.T, op readOp) *http.Response {
	t.Helper()
	path := op.path
	query, sendBody := "", any(m{})
	for _, f := range w.ids {
		if f.re.MatchString(path) {
			for _, v := range f.vals {
				loc := param.FindStringIndex(path)
				if loc == nil {
					break
				}
				path = path[:loc[0]] + v + path[loc[1]:]
			}
			if f.query != "" {
				query = "?" + f.query
			}
			if f.body != nil {
				sendBody = f.body
			}
			break
		}
	}
	// The rest (an id of nothing stored) gets a fresh UUID: the answer is
	// then the documented empty or 404 one, decoded all the same.
	if param.MatchString(path) {
		t.Logf("nothing stored for %s here: a fresh id", path)
	}
	path = param.ReplaceAllStringFunc(path, func(string) string { return uuid.NewString() }) + query
	var body io.Reader
	if op.method == "POST" {
		b, err := json.Marshal(sendBody)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(op.method, w.p.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "ApiKey "+w.key)
	res, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// noRedirects answers a redirect as it is: a documented 302 (the SDK's
// console links) is the answer to decode, not the page it leads to.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func TestReadRoutesDecode(t *testing.T) {
	w := seed(t)
	for _, op := range readOps(t) {
		t.Run(op.method+" "+op.path, func(t *testing.T) {
			name := strings.ToUpper(op.id[:1]) + op.id[1:]
			decode, ok := apiclient.Decoders[name]
			if !ok {
				t.Fatalf("no decoder %s for operationId %s: run make apiclient", name, op.id)
			}
			res := w.do(t, op)
			defer res.Body.Close()
			raw, _ := io.ReadAll(res.Body)
			res.Body = io.NopCloser(bytes.NewReader(raw))
			if _, err := decode(res); err != nil {
				t.Fatalf("%d answer does not match the document: %v\n%s", res.StatusCode, err, clip(raw))
			}
			if why, ok := notOK[op.method+" "+op.path]; ok {
				t.Logf("answered %d (%s)", res.StatusCode, why)
			} else if op.ok2xx && res.StatusCode/100 != 2 {
				t.Errorf("answered %d: %s", res.StatusCode, clip(raw))
			}
		})
	}
}

// notOK are the read routes this test cannot get a success answer from;
// their documented error answer is decoded all the same.
var notOK = map[string]string{
	"GET /api/auth/session": "a console session's route: an API key caller is signed out",
}

func clip(b []byte) string {
	if len(b) > 600 {
		return fmt.Sprintf("%s… (%d bytes)", b[:600], len(b))
	}
	return string(b)
}
