package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func embedObj(refs m, path string) m {
	e := m{"@ag.references": refs}
	if path != "" {
		e["@ag.selector"] = m{"path": path}
	}
	return m{"@ag.embed": e}
}

// mkEmbedWF creates a workflow with one revision whose parameters are params.
func mkEmbedWF(t *testing.T, s *server, slug string, params m) (id, variant string) {
	t.Helper()
	id, variant = mkWorkflow(t, s, "workflows", "workflow", slug)
	commitWF(t, s, "workflows", "workflow", variant, m{"uri": "code", "parameters": params})
	return id, variant
}

func params(t *testing.T, r map[string]any) map[string]any {
	t.Helper()
	return obj(t, r, "workflow_revision", "data", "parameters")
}

func TestResolveEmbeds(t *testing.T) {
	s := newServer(t)
	mkEmbedWF(t, s, "sig", m{"sig": "-- bot", "n": 7})
	mkEmbedWF(t, s, "tone", m{"text": "Be brief.", "nested": embedObj(m{"workflow": m{"slug": "sig"}}, "parameters.sig")})
	mainID, _ := mkEmbedWF(t, s, "main", m{
		"prompt": "Say hi. @ag.embed[workflow.slug=tone;path=parameters.text] @ag.embed[workflow.slug=sig;path=parameters.n]",
		"obj":    embedObj(m{"workflow": m{"slug": "tone"}, "workflow_revision": m{"version": "0"}}, "parameters"),
		"plain":  "no tokens here",
	})

	got := s.ok(t, "POST", "/workflows/revisions/resolve", m{"workflow_ref": m{"id": mainID}})
	p := params(t, got)
	assert.Equal(t, "Say hi. Be brief. 7", p["prompt"], "string tokens: strings as is, other values as JSON")
	assert.Equal(t, m{"text": "Be brief.", "nested": "-- bot"}, p["obj"], "object token replaced by the selection, nested token expanded")
	assert.Equal(t, "no tokens here", p["plain"])
	info := obj(t, got, "resolution_info")
	assert.Equal(t, float64(4), info["embeds_resolved"])
	assert.Equal(t, float64(2), info["depth_reached"])
	assert.Len(t, list(t, info, "references_used"), 2, "tone and sig, each once")
	assert.Empty(t, list(t, info, "errors"))
	used := list(t, info, "references_used")[0].(map[string]any)
	assert.Contains(t, used, "workflow_revision")
	obj(t, got, "retrieval_info", "references")

	// Retrieve resolves only when asked.
	raw := s.ok(t, "POST", "/workflows/revisions/retrieve", m{"workflow_ref": m{"id": mainID}})
	assert.Contains(t, params(t, raw)["prompt"], "@ag.embed[")
	assert.NotContains(t, raw, "resolution_info")
	res := s.ok(t, "POST", "/workflows/revisions/retrieve", m{"workflow_ref": m{"id": mainID}, "resolve": true})
	assert.Equal(t, "Say hi. Be brief. 7", params(t, res)["prompt"])
	assert.Equal(t, float64(4), obj(t, res, "resolution_info")["embeds_resolved"])

	// max_depth 1: the nested token is an error; placeholder marks it.
	got = s.ok(t, "POST", "/workflows/revisions/resolve", m{"workflow_ref": m{"id": mainID}, "max_depth": 1, "error_policy": "placeholder"})
	assert.Equal(t, "<error:max_depth>", obj(t, params(t, got), "obj")["nested"])
	errsList := list(t, obj(t, got, "resolution_info"), "errors")
	require.Len(t, errsList, 1)
	assert.Equal(t, "max_depth", errsList[0].(map[string]any)["code"])
	assert.Equal(t, "parameters.obj > nested", errsList[0].(map[string]any)["path"])
	assert.Equal(t, float64(1), obj(t, got, "resolution_info")["depth_reached"])
	// ...and the default policy (exception) refuses.
	r := s.do(t, "POST", "/workflows/revisions/resolve", m{"workflow_ref": m{"id": mainID}, "max_depth": 1})
	require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
	assert.Equal(t, "embed_unresolved", obj(t, r.json(t), "detail")["code"])

	// max_embeds 1: the second token already fails; keep leaves it.
	got = s.ok(t, "POST", "/workflows/revisions/resolve", m{"workflow_ref": m{"id": mainID}, "max_embeds": 1, "error_policy": "keep"})
	assert.Equal(t, float64(1), obj(t, got, "resolution_info")["embeds_resolved"])
	assert.Equal(t, "max_embeds", list(t, obj(t, got, "resolution_info"), "errors")[0].(map[string]any)["code"])

	assert.Equal(t, http.StatusUnprocessableEntity, s.do(t, "POST", "/workflows/revisions/resolve", m{"workflow_ref": m{"id": mainID}, "error_policy": "ignore"}).status)
}

func TestResolveEmbedErrors(t *testing.T) {
	s := newServer(t)
	// A cycle: a embeds b, b embeds a.
	aID, aVar := mkWorkflow(t, s, "workflows", "workflow", "loop-a")
	_, bVar := mkWorkflow(t, s, "workflows", "workflow", "loop-b")
	commitWF(t, s, "workflows", "workflow", bVar, m{"uri": "code", "parameters": m{"x": embedObj(m{"workflow": m{"slug": "loop-a"}}, "parameters")}})
	commitWF(t, s, "workflows", "workflow", aVar, m{"uri": "code", "parameters": m{"y": embedObj(m{"workflow": m{"slug": "loop-b"}}, "parameters")}})
	r := s.do(t, "POST", "/workflows/revisions/resolve", m{"workflow_ref": m{"id": aID}})
	require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
	assert.Contains(t, string(r.body), `"cycle"`)
	got := s.ok(t, "POST", "/workflows/revisions/resolve", m{"workflow_ref": m{"id": aID}, "error_policy": "placeholder"})
	assert.Equal(t, m{"x": "<error:cycle>"}, params(t, got)["y"])
	// A revision embedding itself is a cycle too.
	selfID, selfVar := mkWorkflow(t, s, "workflows", "workflow", "selfish")
	commitWF(t, s, "workflows", "workflow", selfVar, m{"uri": "code", "parameters": m{"me": "@ag.embed[workflow.slug=selfish]"}})
	got = s.ok(t, "POST", "/workflows/revisions/resolve", m{"workflow_ref": m{"id": selfID}, "error_policy": "placeholder"})
	assert.Equal(t, "<error:cycle>", params(t, got)["me"])

	// A missing target under each policy.
	token := "@ag.embed[workflow.slug=nowhere]"
	missID, _ := mkEmbedWF(t, s, "missing", m{"t": "x " + token, "o": embedObj(m{"application": m{"slug": "nowhere"}}, "")})
	r = s.do(t, "POST", "/workflows/revisions/resolve", m{"workflow_ref": m{"id": missID}, "error_policy": "exception"})
	require.Equal(t, http.StatusBadRequest, r.status)
	assert.Contains(t, string(r.body), "not_found")
	got = s.ok(t, "POST", "/workflows/revisions/resolve", m{"workflow_ref": m{"id": missID}, "error_policy": "placeholder"})
	assert.Equal(t, "x <error:not_found>", params(t, got)["t"])
	assert.Equal(t, "<error:not_found>", params(t, got)["o"])
	assert.Len(t, list(t, obj(t, got, "resolution_info"), "errors"), 2)
	got = s.ok(t, "POST", "/workflows/revisions/resolve", m{"workflow_ref": m{"id": missID}, "error_policy": "keep"})
	assert.Equal(t, "x "+token, params(t, got)["t"])
	assert.Equal(t, embedObj(m{"application": m{"slug": "nowhere"}}, ""), params(t, got)["o"])

	// Malformed tokens and bad selectors are errors with their own codes.
	mkEmbedWF(t, s, "target", m{"k": "v"})
	got = s.ok(t, "POST", "/workflows/revisions/resolve", m{"error_policy": "placeholder", "workflow_revision": m{"data": m{"parameters": m{
		"a": "@ag.embed[workflow.slug]",
		"b": "@ag.embed[workflow.slug=target;path=parameters.zzz]",
		"c": m{"@ag.embed": m{"@ag.references": m{"testset": m{"slug": "target"}}}},
		"d": "@ag.embed[workflow.slug=target;path=parameters.k]",
	}}}})
	p := params(t, got)
	assert.Equal(t, "<error:invalid_token>", p["a"])
	assert.Equal(t, "<error:invalid_selector>", p["b"])
	assert.Equal(t, "<error:invalid_token>", p["c"])
	assert.Equal(t, "v", p["d"], "inline revisions are resolved as sent")
	_, hasRI := got["retrieval_info"]
	assert.False(t, hasRI)
	assert.Equal(t, http.StatusBadRequest, s.do(t, "POST", "/workflows/revisions/resolve", m{"workflow_revision": m{"name": "no data"}}).status)

	// Environments resolve through the same resolver.
	env := obj(t, s.ok(t, "POST", "/simple/environments", m{"environment": m{"slug": "embed-env"}}), "environment")
	got = s.ok(t, "POST", "/environments/revisions/resolve", m{"environment_ref": m{"id": env["id"]}})
	assert.Equal(t, float64(0), obj(t, got, "resolution_info")["embeds_resolved"])
	got = s.ok(t, "POST", "/environments/revisions/retrieve", m{"environment_ref": m{"id": env["id"]}, "resolve": true})
	obj(t, got, "resolution_info")
	got = s.ok(t, "POST", "/environments/revisions/retrieve", m{"environment_ref": m{"id": env["id"]}})
	assert.NotContains(t, got, "resolution_info")
}

// TestEmbedReferenceForms: the compatible platform's clients point at
// "version N of that workflow" with {slug: <artifact slug>, version: "N"}
// in the <e>_revision reference (there, the revision slug is the
// artifact's); and an environment reference with a key embeds what is
// deployed there, as retrieve does.
func TestEmbedReferenceForms(t *testing.T) {
	s := newServer(t)
	// Version N of tone says "vN" (a workflow's first commit is version 0).
	_, toneVar := mkEmbedWF(t, s, "tone", m{"text": "v0"})
	commitWF(t, s, "workflows", "workflow", toneVar, m{"uri": "code", "parameters": m{"text": "v1"}})
	commitWF(t, s, "workflows", "workflow", toneVar, m{"uri": "code", "parameters": m{"text": "v2"}})
	app := obj(t, s.ok(t, "POST", "/simple/applications", m{"application": m{"slug": "bot", "data": m{"uri": "code", "parameters": m{"text": "app v1"}}}}), "application")
	s.ok(t, "PUT", "/simple/applications/"+str(app["id"]), m{"application": m{"id": app["id"], "data": m{"uri": "code", "parameters": m{"text": "app v2"}}}})
	s.ok(t, "POST", "/simple/evaluators", m{"evaluator": m{"slug": "judge", "data": m{"uri": "code", "parameters": m{"text": "judge v1"}}}})

	resolve := func(ps m) map[string]any {
		t.Helper()
		got := s.ok(t, "POST", "/workflows/revisions/resolve", m{"error_policy": "placeholder", "workflow_revision": m{"data": m{"parameters": ps}}})
		assert.Empty(t, list(t, obj(t, got, "resolution_info"), "errors"))
		return params(t, got)
	}
	p := resolve(m{
		"obj":  embedObj(m{"workflow_revision": m{"slug": "tone", "version": "1"}}, "parameters.text"),
		"str":  "@ag.embed[workflow_revision.slug=tone,workflow_revision.version=1;path=parameters.text]",
		"app":  embedObj(m{"application_revision": m{"slug": "bot", "version": "1"}}, "parameters.text"),
		"eval": embedObj(m{"evaluator_revision": m{"slug": "judge", "version": "1"}}, "parameters.text"),
		"head": embedObj(m{"workflow_revision": m{"slug": "tone"}}, "parameters.text"),
	})
	assert.Equal(t, "v1", p["obj"], "version 1 of the artifact's default variant, not its latest")
	assert.Equal(t, "v1", p["str"])
	assert.Equal(t, "app v1", p["app"])
	assert.Equal(t, "judge v1", p["eval"])
	assert.Equal(t, "v2", p["head"], "no version: the latest")

	// A real revision slug still names that revision.
	rev1 := obj(t, s.ok(t, "POST", "/workflows/revisions/retrieve", m{"workflow_variant_ref": m{"id": toneVar}, "workflow_revision_ref": m{"version": "1"}}), "workflow_revision")
	p = resolve(m{"x": embedObj(m{"workflow_revision": m{"slug": rev1["slug"]}}, "parameters.text")})
	assert.Equal(t, "v1", p["x"])

	// Environment references: the revision deployed under the key (derived
	// from the artifact slug, or given in the selector), not the latest.
	s.ok(t, "POST", "/simple/environments", m{"environment": m{"slug": "production"}})
	s.ok(t, "POST", "/workflows/revisions/deploy", m{"workflow_revision_ref": m{"id": rev1["id"]}, "environment_ref": m{"slug": "production"}})
	s.ok(t, "POST", "/applications/revisions/deploy", m{"application_ref": m{"slug": "bot"}, "environment_ref": m{"slug": "production"}, "key": "assistant"})
	p = resolve(m{
		"derived": embedObj(m{"environment": m{"slug": "production"}, "workflow": m{"slug": "tone"}}, "parameters.text"),
		"keyed":   m{"@ag.embed": m{"@ag.references": m{"environment": m{"slug": "production"}}, "@ag.selector": m{"key": "tone.revision", "path": "parameters.text"}}},
		"str":     "@ag.embed[environment.slug=production;key=assistant;path=parameters.text]",
		"app":     "@ag.embed[environment.slug=production,application.slug=bot;key=assistant;path=parameters.text]",
	})
	assert.Equal(t, "v1", p["derived"])
	assert.Equal(t, "v1", p["keyed"])
	assert.Equal(t, "app v2", p["str"])
	assert.Equal(t, "app v2", p["app"])
	got := s.ok(t, "POST", "/workflows/revisions/resolve", m{"workflow_revision": m{"data": m{"parameters": m{"x": "@ag.embed[environment.slug=production;key=tone.revision]"}}}})
	used := list(t, obj(t, got, "resolution_info"), "references_used")
	require.Len(t, used, 1)
	assert.Equal(t, "production", obj(t, used[0].(map[string]any), "environment")["slug"], "references_used names the environment read")
	assert.Equal(t, rev1["id"], obj(t, used[0].(map[string]any), "workflow_revision")["id"])

	// What cannot be resolved becomes <error:CODE> under the placeholder
	// policy, the compatible platform's form.
	got = s.ok(t, "POST", "/workflows/revisions/resolve", m{"error_policy": "placeholder", "workflow_revision": m{"data": m{"parameters": m{
		"gone":   embedObj(m{"workflow_revision": m{"slug": "tone", "version": "9"}}, ""),
		"nokey":  embedObj(m{"environment": m{"slug": "production"}, "workflow": m{"slug": "nowhere"}}, ""),
		"noenv":  "x @ag.embed[environment.slug=staging;key=tone.revision]",
		"badkey": "@ag.embed[environment.slug=production;key=]",
	}}}})
	p = params(t, got)
	assert.Equal(t, "<error:not_found>", p["gone"])
	assert.Equal(t, "<error:not_found>", p["nokey"])
	assert.Equal(t, "x <error:not_found>", p["noenv"])
	assert.Equal(t, "<error:invalid_token>", p["badkey"])
	assert.Len(t, list(t, obj(t, got, "resolution_info"), "errors"), 4)
}
