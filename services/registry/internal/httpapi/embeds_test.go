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
		"obj":    embedObj(m{"workflow": m{"slug": "tone"}, "workflow_revision": m{"version": "0"}}, ""),
		"plain":  "no tokens here",
	})

	got := s.ok(t, "POST", "/workflows/revisions/resolve", m{"workflow_ref": m{"id": mainID}})
	p := params(t, got)
	assert.Equal(t, "Say hi. Be brief. 7", p["prompt"], "string tokens: strings as is, other values as JSON")
	assert.Equal(t, m{"text": "Be brief.", "nested": "-- bot"}, p["obj"], "object token replaced by the default selection (parameters), nested token expanded")
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
	assert.Equal(t, "[unresolved @ag.embed: max_depth]", obj(t, params(t, got), "obj")["nested"])
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
	commitWF(t, s, "workflows", "workflow", bVar, m{"uri": "code", "parameters": m{"x": embedObj(m{"workflow": m{"slug": "loop-a"}}, "")}})
	commitWF(t, s, "workflows", "workflow", aVar, m{"uri": "code", "parameters": m{"y": embedObj(m{"workflow": m{"slug": "loop-b"}}, "")}})
	r := s.do(t, "POST", "/workflows/revisions/resolve", m{"workflow_ref": m{"id": aID}})
	require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
	assert.Contains(t, string(r.body), `"cycle"`)
	got := s.ok(t, "POST", "/workflows/revisions/resolve", m{"workflow_ref": m{"id": aID}, "error_policy": "placeholder"})
	assert.Equal(t, m{"x": "[unresolved @ag.embed: cycle]"}, params(t, got)["y"])
	// A revision embedding itself is a cycle too.
	selfID, selfVar := mkWorkflow(t, s, "workflows", "workflow", "selfish")
	commitWF(t, s, "workflows", "workflow", selfVar, m{"uri": "code", "parameters": m{"me": "@ag.embed[workflow.slug=selfish]"}})
	got = s.ok(t, "POST", "/workflows/revisions/resolve", m{"workflow_ref": m{"id": selfID}, "error_policy": "placeholder"})
	assert.Equal(t, "[unresolved @ag.embed: cycle]", params(t, got)["me"])

	// A missing target under each policy.
	token := "@ag.embed[workflow.slug=nowhere]"
	missID, _ := mkEmbedWF(t, s, "missing", m{"t": "x " + token, "o": embedObj(m{"application": m{"slug": "nowhere"}}, "")})
	r = s.do(t, "POST", "/workflows/revisions/resolve", m{"workflow_ref": m{"id": missID}, "error_policy": "exception"})
	require.Equal(t, http.StatusBadRequest, r.status)
	assert.Contains(t, string(r.body), "not_found")
	got = s.ok(t, "POST", "/workflows/revisions/resolve", m{"workflow_ref": m{"id": missID}, "error_policy": "placeholder"})
	assert.Equal(t, "x [unresolved @ag.embed: not_found]", params(t, got)["t"])
	assert.Equal(t, "[unresolved @ag.embed: not_found]", params(t, got)["o"])
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
	assert.Equal(t, "[unresolved @ag.embed: invalid_token]", p["a"])
	assert.Equal(t, "[unresolved @ag.embed: invalid_selector]", p["b"])
	assert.Equal(t, "[unresolved @ag.embed: invalid_token]", p["c"])
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
