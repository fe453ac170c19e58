package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/services/registry/internal/pgstore"
	"github.com/assayhq/assay/services/registry/internal/tcfile"
)

// A commit that cannot get its variant's row lock gives up after the
// configured lock_timeout with a 503, and writes nothing. The lock is held
// by a second connection for the whole request, so the outcome does not
// depend on timing.
func TestCommitLockTimeout(t *testing.T) {
	s := newServerWith(t, tcfile.Limits{MaxRows: 10, MaxBytes: 1 << 20}, pgstore.WithLockTimeout(50*time.Millisecond))
	_, vid := mkWorkflow(t, s, "workflows", "workflow", "locked")
	commitWF(t, s, "workflows", "workflow", vid, m{"uri": "code", "parameters": m{"a": 1}})

	ctx := context.Background()
	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `SELECT 1 FROM variants WHERE id = $1 FOR UPDATE`, vid)
	require.NoError(t, err)

	r := s.do(t, "POST", "/workflows/revisions/commit", m{"workflow_revision": m{"workflow_variant_id": vid, "data": m{"uri": "code", "parameters": m{"a": 2}}}})
	require.Equal(t, http.StatusServiceUnavailable, r.status, string(r.body))
	d := obj(t, r.json(t), "detail")
	assert.Equal(t, "commit_lock_timeout", d["code"])
	assert.NotEmpty(t, d["message"])
	assert.NotEmpty(t, r.header.Get("Retry-After"))
	require.NoError(t, tx.Rollback(ctx))

	// Nothing was written; once the lock is free the same commit lands as v1.
	got := s.ok(t, "POST", "/workflows/revisions/query", m{"workflow_variant_refs": []m{{"id": vid}}})
	assert.Equal(t, float64(1), got["count"])
	c := commitWF(t, s, "workflows", "workflow", vid, m{"uri": "code", "parameters": m{"a": 2}})
	assert.Equal(t, "1", obj(t, c, "workflow_revision")["version"])
}

// As on the compatible platform: the workflow, environment and query queries also take
// URL query parameters; the body wins, and an unreadable body is ignored
// there (not elsewhere).
func TestQueryURLParameters(t *testing.T) {
	s := newServer(t)
	a1, _ := mkWorkflow(t, s, "workflows", "workflow", "url-a")
	a2, _ := mkWorkflow(t, s, "workflows", "workflow", "url-b")
	mkWorkflow(t, s, "workflows", "workflow", "url-c")

	slugs := func(r map[string]any, key string) []string {
		var out []string
		for _, it := range list(t, r, key) {
			out = append(out, str(it.(map[string]any)["slug"]))
		}
		return out
	}
	got := s.ok(t, "POST", "/workflows/query?workflow_slug=url-a&workflow_slugs=url-b", nil)
	assert.ElementsMatch(t, []string{"url-a", "url-b"}, slugs(got, "workflows"))
	got = s.ok(t, "POST", "/workflows/query?workflow_ids="+a1+","+a2+"&order=ascending&limit=1", nil)
	assert.Equal(t, []string{"url-a"}, slugs(got, "workflows"))
	assert.Equal(t, a1, obj(t, got, "windowing")["next"])
	got = s.ok(t, "POST", "/workflows/query?name=URL-C", nil)
	assert.Equal(t, []string{"url-c"}, slugs(got, "workflows"))
	got = s.ok(t, "POST", "/workflows/query?tags="+`{"x":"1"}`, nil)
	assert.Equal(t, float64(0), got["count"])

	// The body wins over the URL, field by field.
	got = s.ok(t, "POST", "/workflows/query?workflow_slug=url-a", m{"workflow_refs": []m{{"slug": "url-b"}}})
	assert.Equal(t, []string{"url-b"}, slugs(got, "workflows"))
	got = s.ok(t, "POST", "/workflows/query?name=url&limit=1&order=ascending", m{"windowing": m{"limit": 2}})
	assert.Equal(t, []string{"url-a", "url-b"}, slugs(got, "workflows"), "body limit, URL order")

	// Lenient body: malformed JSON or a wrong type is ignored here.
	got = s.ok(t, "POST", "/workflows/query?workflow_slug=url-c", "{not json")
	assert.Equal(t, []string{"url-c"}, slugs(got, "workflows"))
	got = s.ok(t, "POST", "/workflows/query?workflow_slug=url-c", m{"include_archived": "maybe"})
	assert.Equal(t, []string{"url-c"}, slugs(got, "workflows"))
	// A bad URL parameter is still refused, naming it.
	r := s.do(t, "POST", "/workflows/query?limit=ten", nil)
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Contains(t, string(r.body), "limit")
	r = s.do(t, "POST", "/workflows/query?flags={oops", nil)
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	// Testsets take no URL form: their body is strict and the URL ignored.
	assert.Equal(t, http.StatusBadRequest, s.do(t, "POST", "/testsets/query", "{not json").status)

	// Variants and revisions: <e>_id names the parent artifact.
	got = s.ok(t, "POST", "/workflows/variants/query?workflow_id="+a2, nil)
	assert.Equal(t, []string{"url-b-main"}, slugs(got, "workflow_variants"))
	ev, _ := mkWorkflow(t, s, "evaluators", "evaluator", "url-ev")
	got = s.ok(t, "POST", "/evaluators/variants/query?evaluator_id="+ev, "{")
	assert.Equal(t, []string{"url-ev-main"}, slugs(got, "evaluator_variants"))
	// Evaluator artifact queries take no URL form (nor on the compatible platform).
	assert.Equal(t, http.StatusBadRequest, s.do(t, "POST", "/evaluators/query?evaluator_id="+ev, "{").status)

	env := obj(t, s.ok(t, "POST", "/simple/environments", m{"environment": m{"slug": "url-env"}}), "environment")
	got = s.ok(t, "POST", "/environments/revisions/query?environment_slug=url-env&include_archived=true", nil)
	assert.Equal(t, float64(2), got["count"], "v0 and v1 of the simple environment")
	_, hasWin := got["windowing"]
	assert.False(t, hasWin)
	got = s.ok(t, "POST", "/environments/query?environment_id="+str(env["id"]), nil)
	assert.Equal(t, []string{"url-env"}, slugs(got, "environments"))
	s.ok(t, "POST", "/simple/queries", m{"query": m{"slug": "url-q"}})
	got = s.ok(t, "POST", "/queries/query?query_slug=url-q", "[")
	assert.Equal(t, []string{"url-q"}, slugs(got, "queries"))
}

// As on the compatible platform: response windowing on workflow artifact, variant and
// revision lists (and applications'), never on evaluators', environments'
// or testset variants'.
func TestListWindowing(t *testing.T) {
	s := newServer(t)
	for _, slug := range []string{"w-1", "w-2"} {
		_, vid := mkWorkflow(t, s, "workflows", "workflow", slug)
		commitWF(t, s, "workflows", "workflow", vid, m{"uri": "code"})
	}
	win := m{"windowing": m{"limit": 1}}
	for _, path := range []string{"/workflows/query", "/workflows/variants/query", "/workflows/revisions/query"} {
		got := s.ok(t, "POST", path, win)
		assert.Equal(t, float64(1), got["count"], path)
		w := obj(t, got, "windowing")
		assert.Equal(t, float64(1), w["limit"], path)
		assert.NotEmpty(t, w["next"], path)
		// Paging with next reaches the end: a full page, then an empty one.
		got = s.ok(t, "POST", path, m{"windowing": m{"limit": 1, "next": w["next"]}})
		w2 := obj(t, got, "windowing")
		got = s.ok(t, "POST", path, m{"windowing": m{"limit": 1, "next": w2["next"]}})
		assert.Equal(t, float64(0), got["count"], path)
		_, has := got["windowing"]
		assert.False(t, has, "no windowing on a short page: %s", path)
	}
	_, avid := mkWorkflow(t, s, "applications", "application", "app-w")
	mkWorkflow(t, s, "applications", "application", "app-w2")
	_ = avid
	obj(t, s.ok(t, "POST", "/applications/variants/query", win), "windowing")
	mkWorkflow(t, s, "evaluators", "evaluator", "ev-w")
	mkWorkflow(t, s, "evaluators", "evaluator", "ev-w2")
	for _, path := range []string{"/evaluators/query", "/evaluators/variants/query"} {
		got := s.ok(t, "POST", path, win)
		assert.Equal(t, float64(1), got["count"], path)
		_, has := got["windowing"]
		assert.False(t, has, path)
	}
	tsid, _ := newTestset(t, s, "ts-w")
	s.ok(t, "POST", "/testsets/variants", m{"testset_variant": m{"slug": "ts-w-2", "testset_id": tsid}})
	got := s.ok(t, "POST", "/testsets/variants/query", win)
	assert.Equal(t, float64(1), got["count"])
	_, has := got["windowing"]
	assert.False(t, has)
}

// As on the compatible platform: evaluator fork takes its source as ?evaluator_variant_id=.
func TestEvaluatorForkByQueryParameter(t *testing.T) {
	s := newServer(t)
	_, vid := mkWorkflow(t, s, "evaluators", "evaluator", "fork-ev")
	commitWF(t, s, "evaluators", "evaluator", vid, m{"uri": "svc:builtin:auto_exact_match:v0"})
	commitWF(t, s, "evaluators", "evaluator", vid, m{"uri": "svc:builtin:auto_exact_match:v0", "parameters": m{"correct_answer_key": "gold"}})
	got := s.ok(t, "POST", "/evaluators/variants/fork?evaluator_variant_id="+vid, m{"evaluator_variant": m{"slug": "fork-ev-copy"}})
	nv := obj(t, got, "evaluator_variant")
	assert.Equal(t, "fork-ev-copy", nv["slug"])
	revs := s.ok(t, "POST", "/evaluators/revisions/query", m{"evaluator_variant_refs": []m{{"id": nv["id"]}}})
	assert.Equal(t, float64(2), revs["count"], "the lineage was copied")
	r := s.do(t, "POST", "/evaluators/variants/fork?evaluator_variant_id=nope", m{"evaluator_variant": m{"slug": "x"}})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	// Without either source it is still a 422; workflows take no URL form.
	assert.Equal(t, http.StatusUnprocessableEntity, s.do(t, "POST", "/evaluators/variants/fork", m{"evaluator_variant": m{"slug": "y"}}).status)
	assert.Equal(t, http.StatusUnprocessableEntity, s.do(t, "POST", "/workflows/variants/fork?workflow_variant_id="+vid, m{"workflow_variant": m{"slug": "z"}}).status)
}

// As on the compatible platform: an environment commit rewrites the slugs a client sent in
// each reference group from the real workflow lineage.
func TestEnvironmentCommitRewritesSlugs(t *testing.T) {
	s := newServer(t)
	appID, appVar := mkWorkflow(t, s, "applications", "application", "slug-app")
	rev := obj(t, commitWF(t, s, "applications", "application", appVar, m{"uri": "code"}), "application_revision")
	env := obj(t, s.ok(t, "POST", "/simple/environments", m{"environment": m{"slug": "slug-env"}}), "environment")
	ghost := "01900000-0000-7000-8000-0000000000ff"
	got := s.ok(t, "POST", "/environments/revisions/commit", m{"environment_revision": m{
		"environment_id": env["id"], "environment_variant_id": env["variant_id"],
		"data": m{"references": m{
			"slug-app.revision": m{
				"application":          m{"id": appID, "slug": "wrong-app"},
				"application_variant":  m{"id": appVar},
				"application_revision": m{"id": rev["id"], "slug": "wrong-rev", "version": "0"},
			},
			// an unknown application (a revision id must be the project's:
			// TestEnvironmentReferencesStayInTheProject)
			"ghost.revision": m{"application": m{"id": ghost, "slug": "kept"}},
		}}}})
	refs := obj(t, got, "environment_revision", "data", "references")
	g := obj(t, refs, "slug-app.revision")
	assert.Equal(t, m{"id": appID, "slug": "slug-app"}, g["application"])
	assert.Equal(t, m{"id": appVar}, g["application_variant"], "no slug sent, none added")
	assert.Equal(t, m{"id": rev["id"], "slug": rev["slug"], "version": "0"}, g["application_revision"])
	assert.Equal(t, m{"id": ghost, "slug": "kept"}, obj(t, refs, "ghost.revision")["application"], "unresolvable groups are kept as sent")

	// The delta form is rewritten too.
	got = s.ok(t, "POST", "/environments/revisions/commit", m{"environment_revision": m{
		"environment_id": env["id"], "environment_variant_id": env["variant_id"],
		"delta": m{"set": m{"other": m{"application_variant": m{"id": appVar, "slug": "stale"}, "application": m{"slug": "slug-app"}}}}}})
	g = obj(t, got, "environment_revision", "data", "references", "other")
	assert.Equal(t, m{"id": appVar, "slug": str(rev["application_variant_slug"])}, g["application_variant"])
	assert.Equal(t, m{"slug": "slug-app"}, g["application"])
	obj(t, got, "environment_revision", "data", "references", "ghost.revision")
}

// As on the compatible platform: /environments/revisions/query's `references` keeps the
// revisions where the deployment of the listed applications changed.
func TestEnvironmentRevisionsReferencesFilter(t *testing.T) {
	s := newServer(t)
	aID, aVar := mkWorkflow(t, s, "applications", "application", "hist-a")
	bID, bVar := mkWorkflow(t, s, "applications", "application", "hist-b")
	a0 := obj(t, commitWF(t, s, "applications", "application", aVar, m{"uri": "code"}), "application_revision")
	b0 := obj(t, commitWF(t, s, "applications", "application", bVar, m{"uri": "code"}), "application_revision")
	a1 := obj(t, commitWF(t, s, "applications", "application", aVar, m{"uri": "hook"}), "application_revision")
	s.ok(t, "POST", "/simple/environments", m{"environment": m{"slug": "hist"}})
	deploy := func(rev map[string]any) {
		s.ok(t, "POST", "/applications/revisions/deploy", m{"application_revision_ref": m{"id": rev["id"]}, "environment_ref": m{"slug": "hist"}})
	}
	deploy(a0) // v2: a changes
	deploy(b0) // v3: only b changes
	deploy(a1) // v4: a changes
	deploy(a1) // v5: same again, no change
	versions := func(r map[string]any) []string {
		var out []string
		for _, it := range list(t, r, "environment_revisions") {
			out = append(out, str(it.(map[string]any)["version"]))
		}
		return out
	}
	q := func(refs []m) map[string]any {
		return s.ok(t, "POST", "/environments/revisions/query", m{"environment_refs": []m{{"slug": "hist"}}, "references": refs,
			"windowing": m{"order": "ascending"}})
	}
	assert.Equal(t, []string{"2", "4"}, versions(q([]m{{"id": aID}})))
	assert.Equal(t, []string{"3"}, versions(q([]m{{"id": bID}})))
	assert.Equal(t, []string{"2", "3", "4"}, versions(q([]m{{"id": aID}, {"slug": "hist-b"}})))
	assert.Len(t, versions(q(nil)), 6, "without references every revision")
	assert.Equal(t, http.StatusUnprocessableEntity, s.do(t, "POST", "/environments/revisions/query", m{"references": "x"}).status)
}

// As on the compatible platform: the legacy evaluator template list, derived from the
// evaluator catalog.
func TestLegacyEvaluatorTemplates(t *testing.T) {
	s := newServer(t)
	got := s.ok(t, "GET", "/simple/evaluators/templates?include_archived=false", nil)
	ts := list(t, got, "templates")
	assert.Equal(t, float64(len(ts)), got["count"])
	assert.Len(t, ts, 18, "the evaluator catalog's visible templates")
	all := s.ok(t, "GET", "/simple/evaluators/templates?include_archived=true", nil)
	assert.Len(t, list(t, all, "templates"), 24)
	byKey := map[string]map[string]any{}
	for _, it := range ts {
		tm := it.(map[string]any)
		byKey[str(tm["key"])] = tm
		for _, k := range []string{"name", "key", "direct_use", "settings_template", "tags"} {
			assert.Contains(t, tm, k, tm["key"])
		}
		assert.NotContains(t, tm, "archived", "archived templates are hidden")
	}
	regex := byKey["auto_regex_test"]
	assert.Equal(t, false, regex["direct_use"], "regex_pattern is required")
	pat := obj(t, regex, "settings_template", "regex_pattern")
	assert.Equal(t, true, pat["required"])
	assert.Equal(t, "string", pat["type"])
	assert.Equal(t, true, obj(t, regex, "settings_template", "regex_should_match")["default"])
	assert.NotEmpty(t, list(t, regex, "settings_presets"))
	assert.Equal(t, true, byKey["auto_contains_json"]["direct_use"])
	assert.Equal(t, true, byKey["auto_ai_critique"]["requires_llm_api_keys"])
	assert.Equal(t, []any{"classifiers"}, byKey["auto_exact_match"]["tags"])
	assert.Equal(t, "correct_answer", obj(t, byKey["auto_exact_match"], "settings_template", "correct_answer_key")["default"])
	// The route does not shadow GET /simple/evaluators/{id}.
	assert.Equal(t, http.StatusUnprocessableEntity, s.do(t, "GET", "/simple/evaluators/templatez", nil).status)
}

// As on the compatible platform: GET /simple/applications/{id} adds additional_context with
// the playground build kit; its overlay is a partial agent-template.
func TestSimpleApplicationAdditionalContext(t *testing.T) {
	s := newServer(t)
	app := obj(t, s.ok(t, "POST", "/simple/applications", m{"application": m{"slug": "ctx-app", "data": m{"uri": "agent"}}}), "application")
	got := s.ok(t, "GET", "/simple/applications/"+str(app["id"]), nil)
	assert.Equal(t, app["id"], obj(t, got, "application")["id"])
	overlay := obj(t, got, "additional_context", "playground_build_kit", "agent_template_overlay")
	props := obj(t, s.ok(t, "GET", "/workflows/catalog/types/agent-template", nil), "type", "json_schema", "properties")
	for k := range overlay {
		assert.Contains(t, props, k, "overlay keys are agent-template properties")
	}
	// Only on the application fetch: not on create, evaluators or a miss.
	assert.NotContains(t, s.ok(t, "POST", "/simple/applications", m{"application": m{"slug": "ctx-app2"}}), "additional_context")
	ev := obj(t, s.ok(t, "POST", "/simple/evaluators", m{"evaluator": m{"slug": "ctx-ev"}}), "evaluator")
	assert.NotContains(t, s.ok(t, "GET", "/simple/evaluators/"+str(ev["id"]), nil), "additional_context")
	assert.Equal(t, m{"count": float64(0)}, s.ok(t, "GET", "/simple/applications/01900000-0000-7000-8000-000000000000", nil))
}
