package sdkflows

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/testutil/platformtest"
)

// client sends requests as the SDK does: JSON bodies written out by hand
// (so explicit nulls stay nulls), one Authorization form, redirects not
// followed.
type client struct {
	t    *testing.T
	p    *platformtest.Platform
	auth string
}

type answer struct {
	status int
	body   []byte
	header http.Header
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(a.body, &m), "%s", a.body)
	return m
}

var noRedirects = &http.Client{Timeout: 60 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (c *client) do(t *testing.T, method, path, body string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		require.True(t, json.Valid([]byte(body)), "test body is not JSON: %s", body)
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.p.URL+path, rd)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	res, err := noRedirects.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return answer{status: res.StatusCode, body: b, header: res.Header}
}

// ok is do for a call the SDK sends through raise_for_status: anything
// but a 2xx fails the test.
func (c *client) ok(t *testing.T, method, path, body string) map[string]any {
	t.Helper()
	a := c.do(t, method, path, body)
	require.True(t, a.status >= 200 && a.status < 300, "%s %s: %d %s", method, path, a.status, a.body)
	return a.json(t)
}

// j formats a JSON body; arguments are ids and slugs (no quoting needed).
func j(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func obj(t *testing.T, m map[string]any, keys ...string) map[string]any {
	t.Helper()
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		require.True(t, ok, "%s is not an object in %v", k, m)
		m = next
	}
	return m
}

func list(t *testing.T, m map[string]any, key string) []map[string]any {
	t.Helper()
	raw, ok := m[key].([]any)
	require.True(t, ok, "%s is not a list in %v", key, m)
	out := make([]map[string]any, len(raw))
	for i, x := range raw {
		out[i] = x.(map[string]any)
	}
	return out
}

func hexID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func TestSDKFlows(t *testing.T) {
	p := platformtest.Start(t)
	key := p.Account(t, "sdk-flows@example.com")
	c := &client{t: t, p: p, auth: "ApiKey " + key}
	bare := &client{t: t, p: p, auth: key} // SDK 0.95 and earlier: no scheme word

	t.Run("projects/current", func(t *testing.T) { projectsCurrent(t, c, bare) })
	t.Run("legacy configs fetch", func(t *testing.T) { legacyFetch(t, c, bare) })
	t.Run("configs fetch 0.96+", func(t *testing.T) { currentFetch(t, c) })
	t.Run("aupsert pre-check", func(t *testing.T) { upsertPreCheck(t, c) })
	t.Run("aevaluate 0.103+", func(t *testing.T) { evaluateCurrent(t, c) })
	t.Run("aevaluate 0.102 and earlier", func(t *testing.T) { evaluateLegacy(t, c, p) })
	t.Run("metrics query filters", func(t *testing.T) { metricsQueries(t, c) })
	t.Run("refresh of an untraced scenario", func(t *testing.T) { refreshUntraced(t, c) })
}

// A scenario whose cells carry no trace yet (only its input, or an app
// refused before it ran) still answers its metrics record on refresh: the
// SDK reads metrics[0].
func refreshUntraced(t *testing.T, c *client) {
	e := resolveEntities(t, c, "sdk-untraced")
	run := createRun(t, c, e, "untraced")
	sid := list(t, c.ok(t, "POST", "/api/simple/evaluations/"+run+"/scenarios/add", `{"count": 1}`), "scenarios")[0]["id"].(string)
	c.ok(t, "POST", "/api/simple/evaluations/"+run+"/populate", j(`{"results": [{"run_id": %q, "scenario_id": %q, "step_key": %q, "repeat_idx": 0,
		"status": "success", "trace_id": null, "hash_id": null, "testcase_id": %q, "error": null}]}`, run, sid, e.inputKey, e.testcaseIDs[0]))
	ms := list(t, c.ok(t, "POST", "/api/evaluations/metrics/refresh", j(`{"metrics": {"run_id": %q, "scenario_id": %q}}`, run, sid)), "metrics")
	require.NotEmpty(t, ms)
	assert.Equal(t, sid, ms[0]["scenario_id"])
}

// GET /projects/current: the flat project object, for both Authorization forms; the
// project read by id keeps its envelope.
func projectsCurrent(t *testing.T, c, bare *client) {
	for _, cl := range []*client{c, bare} {
		cur := cl.ok(t, "GET", "/api/projects/current", "")
		for _, k := range []string{"organization_id", "organization_name", "workspace_id", "workspace_name", "project_id",
			"project_name", "is_default_project", "user_role", "is_demo"} {
			assert.Contains(t, cur, k)
		}
		assert.NotContains(t, cur, "count", "flat, no envelope")
		assert.Equal(t, false, cur["is_demo"])
		assert.Equal(t, "owner", cur["user_role"])
		byID := cl.ok(t, "GET", "/api/projects/"+cur["project_id"].(string), "")
		assert.EqualValues(t, 1, byID["count"])
		pr := obj(t, byID, "project")
		assert.Equal(t, cur["project_id"], pr["id"])
		assert.Equal(t, cur["workspace_id"], pr["workspace_id"])
		assert.Equal(t, cur["organization_id"], pr["organization_id"])
		assert.Equal(t, pr["name"], cur["project_name"])
	}
	// the query's project_id of an API key must be its own
	cur := c.ok(t, "GET", "/api/projects/current", "")
	again := c.ok(t, "GET", "/api/projects/current?project_id="+cur["project_id"].(string), "")
	assert.Equal(t, cur, again)
}

// POST /variants/configs/fetch, SDK 0.27-0.95, bare key.
func legacyFetch(t *testing.T, c, bare *client) {
	app := obj(t, c.ok(t, "POST", "/api/simple/applications/", `{"application": {"slug": "legacy-app", "name": "Legacy app",
		"flags": {"is_application": true}, "data": {"uri": "user:custom:legacy_app:v0", "url": "http://app.example/run",
		"parameters": {"prompt": {"messages": [{"role": "system", "content": "one"}], "template_format": "curly", "llm_config": {"model": "gpt-4o-mini"}}}}}}`),
		"application")
	appID := app["id"].(string)
	first := obj(t, c.ok(t, "POST", "/api/applications/revisions/retrieve", j(`{"application_ref": {"id": %q}, "resolve": true}`, appID)), "application_revision")
	variantID, variantSlug := first["application_variant_id"].(string), first["variant_slug"].(string)
	firstVersion := first["version"].(string)
	c.ok(t, "PUT", "/api/simple/applications/"+appID, j(`{"application": {"id": %q, "name": "Legacy app", "flags": {"is_application": true},
		"data": {"uri": "user:custom:legacy_app:v0", "url": "http://app.example/run",
		"parameters": {"prompt": {"messages": [{"role": "system", "content": "two"}], "template_format": "curly", "llm_config": {"model": "gpt-4o-mini"}}}}}}`, appID))
	latest := obj(t, c.ok(t, "POST", "/api/applications/revisions/retrieve", j(`{"application_ref": {"id": %q}, "resolve": true}`, appID)), "application_revision")
	require.NotEqual(t, first["id"], latest["id"])
	c.ok(t, "POST", "/api/applications/revisions/deploy", j(`{"application_revision_ref": {"id": %q}, "environment_ref": {"slug": "production"}}`, first["id"]))

	content := func(m map[string]any) string {
		msgs := obj(t, m, "params", "prompt")["messages"].([]any)
		return msgs[0].(map[string]any)["content"].(string)
	}
	fetch := func(body string) answer { return bare.do(t, "POST", "/api/variants/configs/fetch", body) }
	must := func(body string) map[string]any {
		t.Helper()
		a := fetch(body)
		require.Equal(t, http.StatusOK, a.status, "%s → %s", body, a.body)
		return a.json(t)
	}

	// variant by slug (with the app, as the SDK sends it): the latest revision
	got := must(j(`{"variant_ref": {"slug": %q, "version": null, "id": null}, "environment_ref": null, "application_ref": {"slug": "legacy-app", "version": null, "id": null}}`, variantSlug))
	assert.Equal(t, "two", content(got))
	assert.Equal(t, map[string]any{"id": appID, "slug": "legacy-app"}, got["application_ref"])
	vr := obj(t, got, "variant_ref")
	assert.Equal(t, variantID, vr["id"])
	assert.Equal(t, variantSlug, vr["slug"])
	assert.EqualValues(t, mustInt(t, latest["version"].(string)), vr["version"], "version is a number")
	assert.Contains(t, got, "service_ref")
	assert.Nil(t, got["service_ref"])
	assert.Nil(t, got["environment_ref"], "not an environment fetch")
	assert.Equal(t, "http://app.example/run", got["url"])
	vl := obj(t, got, "variant_lifecycle")
	assert.NotEmpty(t, vl["updated_at"])
	assert.Contains(t, vl, "updated_by_id")
	assert.Contains(t, vl, "updated_by")
	assert.NotEmpty(t, obj(t, got, "application_lifecycle")["created_at"])

	// variant slug + version (a number): that revision
	got = must(j(`{"variant_ref": {"slug": %q, "version": %s}, "application_ref": {"slug": "legacy-app"}}`, variantSlug, firstVersion))
	assert.Equal(t, "one", content(got))
	// variant id tried as a revision id first, then as a variant id
	got = must(j(`{"variant_ref": {"id": %q}, "environment_ref": null, "application_ref": null}`, first["id"]))
	assert.Equal(t, "one", content(got))
	got = must(j(`{"variant_ref": {"id": %q}, "environment_ref": null, "application_ref": null}`, variantID))
	assert.Equal(t, "two", content(got))

	// no variant: the environment, production by default, by app slug or id
	for _, body := range []string{
		`{"variant_ref": null, "environment_ref": null, "application_ref": {"slug": "legacy-app"}}`,
		j(`{"variant_ref": null, "environment_ref": {"slug": "production", "version": null, "id": null}, "application_ref": {"id": %q}}`, appID),
	} {
		got = must(body)
		assert.Equal(t, "one", content(got), body)
		er := obj(t, got, "environment_ref")
		assert.Equal(t, "production", er["slug"])
		assert.NotEmpty(t, er["id"])
		assert.IsType(t, float64(0), er["version"])
		assert.NotEmpty(t, obj(t, got, "environment_lifecycle")["created_at"])
	}

	// nothing found: 404 {"detail": "Config not found."}
	for _, body := range []string{
		`{"variant_ref": null, "environment_ref": {"slug": "staging"}, "application_ref": {"slug": "legacy-app"}}`,
		`{"variant_ref": null, "environment_ref": null, "application_ref": {"slug": "no-such-app"}}`,
		`{"variant_ref": {"slug": "no-such-variant"}, "environment_ref": null, "application_ref": null}`,
		`{"variant_ref": null, "environment_ref": null, "application_ref": null}`,
	} {
		a := fetch(body)
		assert.Equal(t, http.StatusNotFound, a.status, "%s → %s", body, a.body)
		assert.JSONEq(t, `{"detail": "Config not found."}`, string(a.body), body)
	}
	a := fetch(`{"variant_ref": {"id": "nope"}}`)
	assert.Equal(t, http.StatusUnprocessableEntity, a.status)
	assert.Contains(t, string(a.body), "variant_ref")
}

func mustInt(t *testing.T, s string) int {
	var n int
	_, err := fmt.Sscan(s, &n)
	require.NoError(t, err)
	return n
}

// The current SDK's configuration fetch, its four step-1 bodies
// (explicit nulls, versions as strings), the workflows fallback and the
// variant query of step 3, reading what the SDK reads.
func currentFetch(t *testing.T, c *client) {
	params := func(n string) string {
		return j(`{"prompt": {"messages": [{"role": "system", "content": %q}], "template_format": "curly", "llm_config": {"model": "gpt-4o-mini"}}}`, n)
	}
	app := obj(t, c.ok(t, "POST", "/api/simple/applications/", j(`{"application": {"slug": "current-app", "name": "Current app",
		"flags": {"is_application": true}, "data": {"uri": "user:custom:current_app:v0", "parameters": %s}}}`, params("one"))), "application")
	appID := app["id"].(string)
	c.ok(t, "PUT", "/api/simple/applications/"+appID, j(`{"application": {"id": %q, "name": "Current app", "flags": {"is_application": true},
		"data": {"uri": "user:custom:current_app:v0", "parameters": %s}}}`, appID, params("two")))
	content := func(rev map[string]any) string {
		msgs := obj(t, rev, "data", "parameters", "prompt")["messages"].([]any)
		return msgs[0].(map[string]any)["content"].(string)
	}
	retrieve := func(body string) map[string]any {
		t.Helper()
		got := c.ok(t, "POST", "/api/applications/revisions/retrieve", body)
		require.EqualValues(t, 1, got["count"], "%s → %v", body, got)
		return obj(t, got, "application_revision")
	}
	latest := retrieve(`{"resolve": true, "application_ref": {"slug": "current-app"}, "application_variant_ref": null, "application_revision_ref": null}`)
	assert.Equal(t, "two", content(latest))
	assert.Equal(t, appID, latest["application_id"])
	variantSlug := latest["variant_slug"].(string)
	assert.NotEmpty(t, latest["application_variant_id"])
	assert.NotEmpty(t, latest["version"])
	assert.NotEmpty(t, latest["created_at"])

	byID := retrieve(j(`{"resolve": true, "application_ref": {"id": %q}, "application_variant_ref": null, "application_revision_ref": null}`, appID))
	assert.Equal(t, latest["id"], byID["id"])
	byVariant := retrieve(j(`{"resolve": true, "application_ref": {"slug": "current-app"}, "application_variant_ref": {"slug": %q}, "application_revision_ref": null}`, variantSlug))
	assert.Equal(t, "two", content(byVariant))
	first := mustInt(t, latest["version"].(string)) - 1
	byVersion := retrieve(j(`{"resolve": true, "application_ref": {"slug": "current-app"}, "application_variant_ref": {"slug": %q}, "application_revision_ref": {"version": "%d"}}`, variantSlug, first))
	assert.Equal(t, "one", content(byVersion))

	// by environment: with only an id, the SDK reads the slug first
	c.ok(t, "POST", "/api/applications/revisions/deploy", j(`{"application_revision_ref": {"id": %q}, "environment_ref": {"slug": "production"}}`, byVersion["id"]))
	slug := obj(t, c.ok(t, "GET", "/api/simple/applications/"+appID, ""), "application")["slug"].(string)
	byEnv := retrieve(j(`{"resolve": true, "environment_ref": {"slug": "production"}, "key": "%s.revision"}`, slug))
	assert.Equal(t, "one", content(byEnv))

	// step 2: the workflows fallback, null refs dropped
	wf := c.ok(t, "POST", "/api/workflows/revisions/retrieve", `{"resolve": true, "workflow_ref": {"slug": "current-app"}}`)
	assert.Equal(t, "two", content(obj(t, wf, "workflow_revision")))
	// step 3: the variant query
	vs := list(t, c.ok(t, "POST", "/api/applications/variants/query", j(`{"application_refs": [{"slug": "current-app"}], "application_variant": {"slug": %q}}`, variantSlug)), "application_variants")
	require.Len(t, vs, 1)
	assert.Equal(t, variantSlug, vs[0]["slug"])
	assert.Equal(t, appID, vs[0]["application_id"])
}

// aupsert's existence check on a slug that does not exist.
func upsertPreCheck(t *testing.T, c *client) {
	for _, fam := range []string{"application", "evaluator"} {
		got := c.ok(t, "POST", "/api/"+fam+"s/revisions/retrieve",
			j(`{"%s_ref": {"id": null, "slug": "absent-%s"}, "%s_revision_ref": null, "resolve": false}`, fam, fam, fam))
		assert.Equal(t, map[string]any{"count": float64(0)}, got, fam)
	}
}

// entities are what A1-A2 and B3 resolve: revision ids and the step keys
// the SDK builds from the revisions' slugs.
type entities struct {
	testsetRev, appRev, evalRev string
	testcaseIDs                 []string
	inputKey, appKey, evalKey   string
}

func resolveEntities(t *testing.T, c *client, slug string) entities {
	var e entities
	// A1: inline testcases
	ts := obj(t, c.ok(t, "POST", "/api/simple/testsets/", j(`{"testset": {"slug": %q, "name": %q, "data": {"testcases": [
		{"data": {"country": "France", "correct_answer": "Paris"}}, {"data": {"country": "Spain", "correct_answer": "Madrid"}}]}}}`, slug, slug)), "testset")
	rev := obj(t, c.ok(t, "POST", "/api/testsets/revisions/retrieve", j(`{"testset_ref": {"id": %q}, "testset_revision_ref": null}`, ts["id"])), "testset_revision")
	e.testsetRev = rev["id"].(string)
	// A2: aupsert per callable
	upsert := func(fam, s string) string {
		got := c.ok(t, "POST", "/api/"+fam+"s/revisions/retrieve", j(`{"%s_ref": {"id": null, "slug": %q}, "%s_revision_ref": null, "resolve": false}`, fam, s, fam))
		require.EqualValues(t, 0, got["count"])
		w := obj(t, c.ok(t, "POST", "/api/simple/"+fam+"s/", j(`{"%s": {"slug": %q, "name": %q, "description": null, "flags": null,
			"data": {"uri": "user:custom:%s:latest"}}}`, fam, s, s, strings.ReplaceAll(s, "-", "_"))), fam)
		r := obj(t, c.ok(t, "POST", "/api/"+fam+"s/revisions/retrieve", j(`{"%s_ref": {"id": %q}}`, fam, w["id"])), fam+"_revision")
		return r["id"].(string)
	}
	e.appRev = upsert("application", slug+"-app")
	e.evalRev = upsert("evaluator", slug+"-judge")
	// B3: the revisions again; step keys from their slugs
	tsr := obj(t, c.ok(t, "POST", "/api/testsets/revisions/retrieve", j(`{"testset_ref": null, "testset_revision_ref": {"id": %q}}`, e.testsetRev)), "testset_revision")
	for _, tc := range obj(t, tsr, "data")["testcases"].([]any) {
		e.testcaseIDs = append(e.testcaseIDs, tc.(map[string]any)["id"].(string))
	}
	require.Len(t, e.testcaseIDs, 2)
	e.inputKey = "testset-" + tsr["slug"].(string)
	ar := obj(t, c.ok(t, "POST", "/api/applications/revisions/retrieve", j(`{"application_ref": null, "application_revision_ref": {"id": %q, "slug": null}, "resolve": true}`, e.appRev)), "application_revision")
	e.appKey = "application-" + ar["slug"].(string)
	er := obj(t, c.ok(t, "POST", "/api/evaluators/revisions/retrieve", j(`{"evaluator_ref": null, "evaluator_revision_ref": {"id": %q, "slug": null}, "resolve": true}`, e.evalRev)), "evaluator_revision")
	e.evalKey = "evaluator-" + er["slug"].(string)
	return e
}

// createRun is B1 (with the explicit nulls) and B2; it checks the step
// keys the SDK built are the run's.
func createRun(t *testing.T, c *client, e entities, name string) string {
	ev := obj(t, c.ok(t, "POST", "/api/simple/evaluations/", j(`{"evaluation": {"name": %q, "description": null, "flags": null, "tags": null, "meta": null,
		"data": {"status": "running", "query_steps": null, "testset_steps": {%q: "custom"}, "application_steps": {%q: "custom"},
		"evaluator_steps": {%q: "custom"}, "repeats": null}}}`, name, e.testsetRev, e.appRev, e.evalRev)), "evaluation")
	id := ev["id"].(string)
	got := c.ok(t, "GET", "/api/evaluations/runs/"+id, "")
	require.EqualValues(t, 1, got["count"])
	run := obj(t, got, "run")
	require.Equal(t, id, run["id"])
	keys := map[string]bool{}
	for _, s := range obj(t, run, "data")["steps"].([]any) {
		keys[s.(map[string]any)["key"].(string)] = true
	}
	for _, k := range []string{e.inputKey, e.appKey, e.evalKey} {
		assert.True(t, keys[k], "step %s is the run's: %v", k, keys)
	}
	return id
}

// ingest stores one root span, as the SDK's exporter would (its answer
// is ignored), and waits as C2b does until the trace reads back.
func ingest(t *testing.T, c *client, node string, inputs, outputs string) string {
	traceID, spanID := hexID(16), hexID(8)
	now := time.Now().UTC().Format(time.RFC3339Nano)
	c.ok(t, "POST", "/api/tracing/spans/ingest", j(`{"spans": [{"trace_id": %q, "span_id": %q, "span_name": %q, "start_time": %q, "end_time": %q,
		"attributes": {"ag": {"type": {"node": "workflow"}, "data": {"inputs": %s, "outputs": %s}}}}]}`, traceID, spanID, node, now, now, inputs, outputs))
	deadline := time.Now().Add(30 * time.Second)
	for {
		a := c.do(t, "GET", "/api/tracing/traces/"+traceID, "")
		if a.status == http.StatusOK {
			if traces, ok := a.json(t)["traces"].(map[string]any); ok && len(traces) > 0 {
				for _, tr := range traces {
					if spans, ok := tr.(map[string]any)["spans"].(map[string]any); ok && len(spans) > 0 {
						return traceID
					}
				}
			}
		}
		require.True(t, time.Now().Before(deadline), "trace %s never read back: %d %s", traceID, a.status, a.body)
		time.Sleep(100 * time.Millisecond)
	}
}

// dashed is a 32-hex trace id as the dashed UUID the SDK writes in cells.
func dashed(h string) string {
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// SDK 0.103+: the whole local evaluation loop in the client's order; the
// second scenario's app fails, so the SDK closes with errors. The step
// labels follow that order: A the testset and callables, B the revisions
// and the run, C each scenario, D the close and what is read after it.
func evaluateCurrent(t *testing.T, c *client) {
	e := resolveEntities(t, c, "sdk-now")
	run := createRun(t, c, e, "SDK Eval [26-12-06 · 23:30]")
	// C1
	scen := list(t, c.ok(t, "POST", "/api/simple/evaluations/"+run+"/scenarios/add", `{"count": 2}`), "scenarios")
	require.Len(t, scen, 2)
	cell := func(s, key, status, traceID, testcaseID, errJSON string) {
		tr, tc := "null", "null"
		if traceID != "" {
			tr = j("%q", dashed(traceID))
		}
		if testcaseID != "" {
			tc = j("%q", testcaseID)
		}
		c.ok(t, "POST", "/api/simple/evaluations/"+run+"/populate", j(`{"results": [{"run_id": %q, "scenario_id": %q, "step_key": %q, "repeat_idx": 0,
			"status": %q, "trace_id": %s, "hash_id": null, "testcase_id": %s, "error": %s}]}`, run, s, key, status, tr, tc, errJSON))
	}
	statuses := []string{"success", "errors"}
	for i, sc := range scen {
		sid := sc["id"].(string)
		// C2a input cell
		cell(sid, e.inputKey, "success", "", e.testcaseIDs[i], "null")
		// C2b/C2c the app runs locally; the second one fails
		appTrace := ingest(t, c, "sdk-now-app", `{"country": "France"}`, `"Paris"`)
		if i == 0 {
			cell(sid, e.appKey, "success", appTrace, "", "null")
		} else {
			cell(sid, e.appKey, "failure", appTrace, "", `{"message": "boom", "stacktrace": null}`)
		}
		// C2d the evaluator runs locally
		evTrace := ingest(t, c, "sdk-now-judge", `{"outputs": "Paris"}`, `{"score": 1, "success": true}`)
		cell(sid, e.evalKey, "success", evTrace, "", "null")
		// C2e: the SDK reads metrics[0] at once
		got := c.ok(t, "POST", "/api/evaluations/metrics/refresh", j(`{"metrics": {"run_id": %q, "scenario_id": %q}}`, run, sid))
		ms := list(t, got, "metrics")
		require.NotEmpty(t, ms, "the refresh answers the scenario's metrics")
		assert.Equal(t, sid, ms[0]["scenario_id"])
		assert.Equal(t, run, ms[0]["run_id"])
		assert.Contains(t, obj(t, ms[0], "data"), e.evalKey)
		// C2f
		c.ok(t, "PATCH", "/api/evaluations/scenarios/"+sid, j(`{"scenario": {"id": %q, "status": %q, "flags": null, "tags": null, "meta": null}}`, sid, statuses[i]))
	}
	// C3: run level, explicit null scenario
	got := c.ok(t, "POST", "/api/evaluations/metrics/refresh", j(`{"metrics": {"run_id": %q, "scenario_id": null}}`, run))
	for _, m := range list(t, got, "metrics") {
		assert.NotContains(t, m, "scenario_id", "run-level records only")
	}
	// D1: close with the rolled-up status, then read the run again
	closed := obj(t, c.ok(t, "POST", "/api/evaluations/runs/"+run+"/close?status=errors", ""), "run")
	assert.Equal(t, run, closed["id"])
	r := obj(t, c.ok(t, "GET", "/api/evaluations/runs/"+run, ""), "run")
	assert.Equal(t, "errors", r["status"], "the status the client chose")
	assert.Equal(t, true, obj(t, r, "flags")["is_closed"])
	// D2 global, D3 variational
	global := list(t, c.ok(t, "POST", "/api/evaluations/metrics/query", j(`{"metrics": {"run_id": %q, "scenario_ids": false, "timestamps": false}}`, run)), "metrics")
	require.Len(t, global, 1)
	assert.Equal(t, run, global[0]["run_id"])
	assert.NotContains(t, global[0], "scenario_id")
	assert.Contains(t, obj(t, global[0], "data"), e.evalKey)
	variational := list(t, c.ok(t, "POST", "/api/evaluations/metrics/query", j(`{"metrics": {"run_id": %q, "scenario_ids": true, "timestamps": false}}`, run)), "metrics")
	require.Len(t, variational, 2)
	for _, m := range variational {
		assert.Equal(t, run, m["run_id"])
		assert.NotEmpty(t, m["scenario_id"])
	}
	// D4: the project, and the URL the SDK prints
	cur := c.ok(t, "GET", "/api/projects/current", "")
	link := c.do(t, "GET", j("/w/%s/p/%s/evaluations/results/%s", cur["workspace_id"], cur["project_id"], run), "")
	assert.Equal(t, http.StatusFound, link.status, "%s", link.body)
	assert.Equal(t, "/console/evaluations/"+run+"?project_id="+cur["project_id"].(string), link.header.Get("Location"))
	trace := hexID(16)
	link = (&client{p: c.p}).do(t, "GET", j("/w/%s/p/%s/observability?trace=%s", cur["workspace_id"], cur["project_id"], trace), "")
	assert.Equal(t, http.StatusFound, link.status, "%s", link.body)
	assert.Equal(t, "/console/traces/"+trace+"?"+url.Values{"project_id": {cur["project_id"].(string)}}.Encode(), link.header.Get("Location"))
	// the older SDKs' /preview prefix and ?jit=false
	prev := c.ok(t, "GET", "/api/preview/evaluations/runs/"+run+"?jit=false", "")
	assert.Equal(t, "errors", obj(t, prev, "run")["status"])
}

// SDK 0.102 and earlier (0.96.5 and earlier under /preview, as
// here): per-cell writes, refreshes without any error handling, and the
// close status in the path. A job failing on the
// closed run afterwards does not change its status.
func evaluateLegacy(t *testing.T, c *client, p *platformtest.Platform) {
	e := resolveEntities(t, c, "sdk-old")
	run := createRun(t, c, e, "SDK Eval")
	pre := "/api/preview" // up to SDK 0.96.5 every evaluation path is under /preview
	for i, tc := range e.testcaseIDs {
		s := list(t, c.ok(t, "POST", pre+"/evaluations/scenarios/", j(`{"scenarios": [{"run_id": %q, "status": "success", "flags": null, "tags": null, "meta": null}]}`, run)), "scenarios")
		sid := s[0]["id"].(string)
		write := func(key, traceID, testcaseID string) {
			tr, tcj := "null", "null"
			if traceID != "" {
				tr = j("%q", dashed(traceID))
			}
			if testcaseID != "" {
				tcj = j("%q", testcaseID)
			}
			c.ok(t, "POST", pre+"/evaluations/results/", j(`{"results": [{"run_id": %q, "scenario_id": %q, "step_key": %q, "repeat_idx": 0, "status": "success",
				"testcase_id": %s, "trace_id": %s, "error": null, "flags": null, "tags": null, "meta": null}]}`, run, sid, key, tcj, tr))
		}
		write(e.inputKey, "", tc)
		write(e.appKey, ingest(t, c, "sdk-old-app", `{"country": "Spain"}`, `"Madrid"`), "")
		write(e.evalKey, ingest(t, c, "sdk-old-judge", `{"outputs": "Madrid"}`, j(`{"score": %d}`, i)), "")
		got := c.ok(t, "POST", pre+"/evaluations/metrics/refresh", j(`{"metrics": {"run_id": %q, "scenario_id": %q}}`, run, sid))
		ms := list(t, got, "metrics")
		require.NotEmpty(t, ms, "SDK 0.102 indexes metrics[0] without a try")
		assert.Equal(t, sid, ms[0]["scenario_id"])
	}
	got := c.ok(t, "POST", pre+"/evaluations/metrics/refresh", j(`{"metrics": {"run_id": %q}}`, run))
	require.NotEmpty(t, list(t, got, "metrics"), "SDK 0.102 indexes the run's metrics[0] too")
	closed := obj(t, c.ok(t, "POST", pre+"/evaluations/runs/"+run+"/close/success", ""), "run")
	assert.Equal(t, "success", closed["status"])
	assert.Equal(t, true, obj(t, closed, "flags")["is_closed"])
	bad := c.do(t, "POST", "/api/evaluations/runs/"+run+"/close/finished", "")
	assert.Equal(t, http.StatusUnprocessableEntity, bad.status)
	assert.Contains(t, string(bad.body), "status")

	// What the runtime's consumer does when a job of the run fails for
	// good: the registry's fail route. On a closed run it keeps the
	// closer's status and records the error.
	cur := c.ok(t, "GET", "/api/projects/current", "")
	req, err := http.NewRequest("POST", p.Registry.URL+"/internal/evaluations/runs/"+run+"/fail", bytes.NewReader([]byte(`{"error": "late metrics job"}`)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	scope.Set(req.Header, platformtest.PairToken("runtime", "registry"), scope.Scope{ProjectID: uuid.MustParse(cur["project_id"].(string))})
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", b)
	r := obj(t, c.ok(t, "GET", "/api/evaluations/runs/"+run, ""), "run")
	assert.Equal(t, "success", r["status"], "a job failing after the close does not flip the closed run")
	assert.Equal(t, "late metrics job", obj(t, r, "meta")["error"])
}

// The compatible web frontend's metrics queries and the SDK's D2/D3 reads
// (evaluateCurrent): the filter under metrics (plural), metric as an alias,
// booleans for presence, lists, no other run's rows, unknown keys refused.
func metricsQueries(t *testing.T, c *client) {
	e := resolveEntities(t, c, "sdk-q")
	runs := []string{createRun(t, c, e, "q1"), createRun(t, c, e, "q2")}
	scen := map[string]string{}
	for _, r := range runs {
		s := list(t, c.ok(t, "POST", "/api/simple/evaluations/"+r+"/scenarios/add", `{"count": 1}`), "scenarios")
		scen[r] = s[0]["id"].(string)
		// the annotation merge of the UI: upsert on run + scenario, and the run-level row
		c.ok(t, "POST", "/api/evaluations/metrics/", j(`{"metrics": [{"run_id": %q, "scenario_id": %q, "status": "success",
			"data": {"%s.my-rubric": {"attributes.ag.data.outputs.good": {"type": "binary", "count": 1, "freq": [{"value": true, "count": 1}]}}}},
			{"run_id": %q, "data": {}}]}`, r, scen[r], e.appKey, r))
		c.ok(t, "POST", "/api/evaluations/metrics/", j(`{"metrics": [{"run_id": %q, "scenario_id": %q, "status": "success",
			"data": {"%s.my-rubric": {"attributes.ag.data.outputs.good": {"type": "binary", "count": 2}}}}]}`, r, scen[r], e.appKey))
	}
	r1 := runs[0]
	q := func(body string) []map[string]any {
		t.Helper()
		return list(t, c.ok(t, "POST", "/api/evaluations/metrics/query", body), "metrics")
	}
	one := q(j(`{"metrics": {"run_ids": [%q], "scenario_ids": [%q]}, "windowing": {}}`, r1, scen[r1]))
	require.Len(t, one, 1, "upserted on run + scenario")
	assert.EqualValues(t, 2, obj(t, one[0], "data", e.appKey+".my-rubric", "attributes.ag.data.outputs.good")["count"])
	assert.Len(t, q(j(`{"metrics": {"run_id": %q}}`, r1)), 2, "only this run's rows")
	assert.Len(t, q(j(`{"metric": {"run_id": %q}}`, r1)), 2, "ours, singular, still read")
	assert.Len(t, q(j(`{"metrics": {"run_ids": [%q, %q], "scenario_ids": false}}`, runs[0], runs[1])), 2)
	assert.Len(t, q(j(`{"metrics": {"run_id": %q, "scenario_ids": true}}`, r1)), 1)
	assert.Len(t, q(j(`{"metrics": {"scenario_ids": [%q, %q]}}`, scen[runs[0]], scen[runs[1]])), 2)
	assert.Len(t, q(j(`{"metrics": {"run_id": %q, "timestamps": true}}`, r1)), 0)
	// ids named as the compatible API names them (ours beside them)
	rows := q(j(`{"metrics": {"run_id": %q}}`, runs[1]))
	require.Len(t, rows, 2)
	id0, id1 := rows[0]["id"].(string), rows[1]["id"].(string)
	got := c.ok(t, "GET", "/api/evaluations/metrics/"+id0, "")
	assert.Equal(t, id0, list(t, got, "metrics")[0]["id"])
	assert.Equal(t, id0, obj(t, got, "metric")["id"])
	got = c.ok(t, "DELETE", "/api/evaluations/metrics/", j(`{"metrics_ids": [%q]}`, id0))
	assert.Equal(t, []any{id0}, got["metrics_ids"])
	got = c.ok(t, "DELETE", "/api/evaluations/metrics/"+id1, "")
	assert.Equal(t, []any{id1}, got["metrics_ids"])
	assert.Len(t, q(j(`{"metrics": {"run_id": %q}}`, runs[1])), 0)

	for body, field := range map[string]string{
		j(`{"metrics": {"run_id": %q}, "metricz": {}}`, r1):                "metricz",
		j(`{"metrics": {"run_id": %q}, "metric": {"run_id": %q}}`, r1, r1): "metric",
		j(`{"metrics": {"run_id": %q, "scenario_idz": true}}`, r1):         "scenario_idz",
		j(`{"metrics": {"run_id": %q, "timestamps": "yes"}}`, r1):          "timestamps",
	} {
		a := c.do(t, "POST", "/api/evaluations/metrics/query", body)
		assert.Equal(t, http.StatusUnprocessableEntity, a.status, "%s → %s", body, a.body)
		assert.Contains(t, string(a.body), field, body)
	}
}
