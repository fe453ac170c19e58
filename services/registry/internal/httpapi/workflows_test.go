package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type m = map[string]any

// mkWorkflow creates an artifact of the role at plural with a variant and
// returns (artifact id, variant id).
func mkWorkflow(t *testing.T, s *server, plural, key, slug string) (string, string) {
	t.Helper()
	a := s.ok(t, "POST", "/"+plural, m{key: m{"slug": slug, "name": slug, "flags": m{}}})
	id := str(obj(t, a, key)["id"])
	v := s.ok(t, "POST", "/"+plural+"/variants", m{key + "_variant": m{"slug": slug + "-main", key + "_id": id}})
	return id, str(obj(t, v, key+"_variant")["id"])
}

func commitWF(t *testing.T, s *server, plural, key, variant string, data any) map[string]any {
	t.Helper()
	return s.ok(t, "POST", "/"+plural+"/revisions/commit", m{key + "_revision": m{key + "_variant_id": variant, "data": data}})
}

func detail(t *testing.T, r resp) string {
	t.Helper()
	return string(r.body)
}

func TestWorkflowArtifactsVariantsRevisions(t *testing.T) {
	s := newServer(t)
	created := s.ok(t, "POST", "/workflows", m{"workflow": m{"slug": "wf", "name": "WF", "tags": m{"team": "a"}}})
	w := obj(t, created, "workflow")
	id := str(w["id"])
	assert.Equal(t, "wf", w["slug"])
	_, hasFlags := w["flags"]
	assert.False(t, hasFlags, "flags omitted when none were sent")
	assert.Nil(t, w["updated_at"], "nulls are omitted")

	r := s.do(t, "POST", "/workflows", m{"workflow": m{"slug": "wf"}})
	assert.Equal(t, http.StatusConflict, r.status, detail(t, r))
	r = s.do(t, "POST", "/workflows", m{"workflow": m{"slug": "__ag__x"}})
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Contains(t, string(r.body), "reserved")
	r = s.do(t, "POST", "/workflows", m{"workflow": m{"slug": "bad slug"}})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Contains(t, string(r.body), "slug")

	assert.Equal(t, float64(0), s.ok(t, "GET", "/workflows/01900000-0000-7000-8000-000000000000", nil)["count"])
	assert.Equal(t, http.StatusUnprocessableEntity, s.do(t, "GET", "/workflows/nope", nil).status)

	// Partial edit: only present fields change; mismatch 400, blank 422.
	e := obj(t, s.ok(t, "PUT", "/workflows/"+id, m{"workflow": m{"id": id, "description": "d"}}), "workflow")
	assert.Equal(t, "WF", e["name"])
	assert.Equal(t, "d", e["description"])
	assert.Equal(t, m{"team": "a"}, e["tags"])
	assert.Equal(t, http.StatusBadRequest, s.do(t, "PUT", "/workflows/"+id, m{"workflow": m{"id": "01900000-0000-7000-8000-000000000000"}}).status)
	assert.Equal(t, http.StatusUnprocessableEntity, s.do(t, "PUT", "/workflows/"+id, m{"workflow": m{"id": id, "name": "  "}}).status)
	missing := "01900000-0000-7000-8000-000000000001"
	assert.Equal(t, http.StatusNotFound, s.do(t, "PUT", "/workflows/"+missing, m{"workflow": m{"id": missing, "name": "x"}}).status)

	arch := obj(t, s.ok(t, "POST", "/workflows/"+id+"/archive", nil), "workflow")
	assert.NotNil(t, arch["deleted_at"])
	assert.Equal(t, http.StatusNotFound, s.do(t, "PUT", "/workflows/"+id, m{"workflow": m{"id": id, "name": "x"}}).status, "archived workflow edit is 404")
	assert.Equal(t, float64(0), s.ok(t, "POST", "/workflows/query", m{})["count"])
	assert.Equal(t, float64(1), s.ok(t, "POST", "/workflows/query", m{"include_archived": true})["count"])
	s.ok(t, "POST", "/workflows/"+id+"/unarchive", nil)

	// Variants carry the artifact's flags and both id aliases.
	v := obj(t, s.ok(t, "POST", "/workflows/variants", m{"workflow_variant": m{"slug": "main", "workflow_id": id}}), "workflow_variant")
	vid := str(v["id"])
	assert.Equal(t, id, v["workflow_id"])
	assert.Equal(t, id, v["artifact_id"])
	assert.Equal(t, "main", v["name"])
	assert.Equal(t, float64(1), s.ok(t, "POST", "/workflows/variants/query", m{"workflow_refs": []m{{"id": id}}})["count"])

	// The initial revision: no data, 409 the second time.
	first := obj(t, s.ok(t, "POST", "/workflows/revisions", m{"workflow_revision": m{"workflow_id": id, "workflow_variant_id": vid}}), "workflow_revision")
	assert.Equal(t, "0", first["version"])
	assert.Equal(t, http.StatusConflict, s.do(t, "POST", "/workflows/revisions", m{"workflow_revision": m{"workflow_id": id, "workflow_variant_id": vid}}).status)

	rev := obj(t, commitWF(t, s, "workflows", "workflow", vid, m{"uri": "agenta:builtin:auto_exact_match:v0", "parameters": m{"correct_answer_key": "answer"}}), "workflow_revision")
	assert.Equal(t, "1", rev["version"])
	for _, k := range []string{"workflow_id", "workflow_variant_id", "artifact_id", "variant_id", "workflow_slug", "workflow_variant_slug", "artifact_slug", "variant_slug"} {
		assert.Contains(t, rev, k)
	}
	flags := obj(t, rev, "flags")
	assert.Len(t, flags, 17)
	assert.Equal(t, true, flags["is_managed"])
	assert.Equal(t, false, flags["is_custom"])
	data := obj(t, rev, "data")
	assert.Equal(t, "svc:builtin:auto_exact_match:v0", data["uri"], "the alias provider is answered as ours")
	assert.Equal(t, servicesURL+"/auto_exact_match/v0", data["url"])
	assert.Contains(t, obj(t, data, "schemas"), "parameters", "schemas come from the catalog")

	rid := str(rev["id"])
	got := obj(t, s.ok(t, "GET", "/workflows/revisions/"+rid, nil), "workflow_revision")
	assert.Equal(t, rev["data"], got["data"])
	ed := obj(t, s.ok(t, "PUT", "/workflows/revisions/"+rid, m{"workflow_revision": m{"id": rid, "name": "named"}}), "workflow_revision")
	assert.Equal(t, "named", ed["name"])
	assert.Equal(t, rev["data"], ed["data"], "editing a revision never touches data")

	log := list(t, s.ok(t, "POST", "/workflows/revisions/log", m{"workflow_revisions": m{"workflow_variant_id": vid}}), "workflow_revisions")
	require.Len(t, log, 2)
	assert.Equal(t, rid, log[0].(map[string]any)["id"])
	assert.NotContains(t, log[0], "workflow_slug", "log leaves the slug aliases out")
	assert.Equal(t, float64(2), s.ok(t, "POST", "/workflows/revisions/query", m{"workflow_variant_refs": []m{{"id": vid}}})["count"])
	assert.Equal(t, float64(1), s.ok(t, "POST", "/workflows/revisions/query", m{"workflow_variant_refs": []m{{"id": vid}}, "windowing": m{"limit": 1}})["count"])
	s.ok(t, "POST", "/workflows/revisions/"+rid+"/archive", nil)
	assert.Equal(t, float64(1), s.ok(t, "POST", "/workflows/revisions/query", m{"workflow_variant_refs": []m{{"id": vid}}})["count"])
	s.ok(t, "POST", "/workflows/revisions/"+rid+"/unarchive", nil)

	fork := obj(t, s.ok(t, "POST", "/workflows/variants/fork", m{"workflow_variant": m{"slug": "forked"}, "workflow_variant_ref": m{"id": vid}}), "workflow_variant")
	fr := obj(t, s.ok(t, "POST", "/workflows/revisions/retrieve", m{"workflow_variant_ref": m{"id": fork["id"]}}), "workflow_revision")
	assert.Equal(t, "1", fr["version"])
	assert.Equal(t, rev["data"], fr["data"])
	assert.Equal(t, http.StatusBadRequest, s.do(t, "POST", "/workflows/variants/fork", m{"workflow_variant": m{"slug": "__ag__f"}, "workflow_variant_ref": m{"id": vid}}).status)

	av := obj(t, s.ok(t, "POST", "/workflows/variants/"+vid+"/archive", nil), "workflow_variant")
	assert.NotNil(t, av["deleted_at"])
}

func TestWorkflowCommitRules(t *testing.T) {
	s := newServer(t)
	_, vid := mkWorkflow(t, s, "workflows", "workflow", "c")

	r := s.do(t, "POST", "/workflows/revisions/commit", m{"workflow_revision": m{"workflow_variant_id": vid, "data": m{"uri": "svc:custom:hook:v0", "colour": "red"}}})
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Contains(t, string(r.body), "colour")
	r = s.do(t, "POST", "/workflows/revisions/commit", m{"workflow_revision": m{"workflow_variant_id": vid, "data": m{"schemas": m{"inputs": m{"type": "nonsense"}}}}})
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Contains(t, string(r.body), "inputs")
	r = s.do(t, "POST", "/workflows/revisions/commit", m{"workflow_revision": m{"workflow_variant_id": vid, "data": m{"url": "ftp://x"}}})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Contains(t, string(r.body), "url")
	r = s.do(t, "POST", "/workflows/revisions/commit", m{"workflow_revision": m{"data": m{}}})
	assert.Equal(t, http.StatusBadRequest, r.status)
	r = s.do(t, "POST", "/workflows/revisions/commit", m{"workflow_revision": m{"workflow_variant_id": vid, "data": m{}, "delta": m{}}})
	assert.Equal(t, http.StatusBadRequest, r.status)

	data := m{"uri": "svc:custom:hook:v0", "url": "https://hooks.example.com/run", "parameters": m{"a": 1, "b": m{"c": "x"}},
		"schemas": m{"inputs": m{"type": "object", "properties": m{"history": m{"type": "array", "x-ag-type-ref": "messages"}}}}}
	c1 := commitWF(t, s, "workflows", "workflow", vid, data)
	assert.Equal(t, "committed", c1["status"])
	h1 := obj(t, c1, "workflow_revision")
	f := obj(t, h1, "flags")
	assert.Equal(t, true, f["is_custom"])
	assert.Equal(t, true, f["is_hook"])
	assert.Equal(t, true, f["is_chat"], "a messages input makes a chat")
	assert.Equal(t, true, f["has_url"])
	assert.Equal(t, "https://hooks.example.com/run", obj(t, h1, "data")["url"], "a given url is kept")

	// The same data again changes nothing.
	c2 := commitWF(t, s, "workflows", "workflow", vid, data)
	assert.Equal(t, "no_change", c2["status"])
	assert.Equal(t, h1["id"], obj(t, c2, "workflow_revision")["id"])
	assert.Equal(t, "no_change", list(t, c2, "warnings")[0].(map[string]any)["code"])

	// Data is required once the head has data.
	r = s.do(t, "POST", "/workflows/revisions/commit", m{"workflow_revision": m{"workflow_variant_id": vid, "message": "x"}})
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Contains(t, string(r.body), "data is required")

	// Legacy delta: deep-merge set, dotted remove.
	c3 := s.ok(t, "POST", "/workflows/revisions/commit", m{"workflow_revision": m{"workflow_variant_id": vid,
		"delta": m{"set": m{"parameters": m{"b": m{"d": "y"}}}, "remove": []string{"parameters.a"}}}})
	p := obj(t, c3, "workflow_revision", "data", "parameters")
	assert.Equal(t, m{"b": m{"c": "x", "d": "y"}}, p)

	// A stale base is a 409 naming the current head; nothing is written.
	head := obj(t, c3, "workflow_revision")
	r = s.do(t, "POST", "/workflows/revisions/commit", m{"workflow_revision": m{"workflow_variant_id": vid, "base_revision_id": h1["id"], "data": m{"parameters": m{}}}})
	require.Equal(t, http.StatusConflict, r.status)
	d := obj(t, r.json(t), "detail")
	assert.Equal(t, "revision_conflict", d["code"])
	assert.Equal(t, head["id"], obj(t, d, "details")["current_revision_id"])
	assert.Equal(t, "1", obj(t, d, "details")["current_revision_version"])

	// Ordered operations need the base and apply in order.
	r = s.do(t, "POST", "/workflows/revisions/commit", m{"workflow_revision": m{"workflow_variant_id": vid, "delta": m{"operations": []m{{"operation": "set", "target": []string{"parameters", "z"}, "value": 1}}}}})
	assert.Equal(t, http.StatusBadRequest, r.status)
	r = s.do(t, "POST", "/workflows/revisions/commit", m{"workflow_revision": m{"workflow_variant_id": vid, "base_revision_id": head["id"], "delta": m{"operations": []m{{"operation": "set"}}, "extra": 1}}})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	c4 := s.ok(t, "POST", "/workflows/revisions/commit", m{"workflow_revision": m{"workflow_variant_id": vid, "base_revision_id": head["id"], "delta": m{"operations": []m{
		{"operation": "set", "target": []any{"parameters", "list"}, "value": []any{"a"}},
		{"operation": "add_item", "target": []any{"parameters", "list"}, "value": "b"},
		{"operation": "remove_item", "target": []any{"parameters", "list"}, "value": "a"},
		{"operation": "set", "target": []any{"parameters", "text"}, "value": "hello world"},
		{"operation": "edit_text", "target": []any{"parameters", "text"}, "edits": []m{{"old": "world", "new": "there"}}},
		{"operation": "remove", "target": []any{"parameters", "b"}},
	}}}})
	assert.Equal(t, m{"list": []any{"b"}, "text": "hello there"}, obj(t, c4, "workflow_revision", "data", "parameters"))
	r = s.do(t, "POST", "/workflows/revisions/commit", m{"workflow_revision": m{"workflow_variant_id": vid, "base_revision_id": obj(t, c4, "workflow_revision")["id"],
		"delta": m{"operations": []m{{"operation": "remove", "target": []any{"nope"}}}}}})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)

	// Application and evaluator commits take the plain path: no status.
	_, av := mkWorkflow(t, s, "applications", "application", "app")
	a1 := commitWF(t, s, "applications", "application", av, m{"uri": "svc:builtin:completion:v0"})
	assert.NotContains(t, a1, "status")
	a2 := commitWF(t, s, "applications", "application", av, m{"uri": "svc:builtin:completion:v0"})
	assert.NotEqual(t, obj(t, a1, "application_revision")["id"], obj(t, a2, "application_revision")["id"])
}

func TestApplicationsAndEvaluatorsShareTheWorkflowFamily(t *testing.T) {
	s := newServer(t)
	appID, appVariant := mkWorkflow(t, s, "applications", "application", "shop")
	evID, _ := mkWorkflow(t, s, "evaluators", "evaluator", "judge")

	app := obj(t, s.ok(t, "GET", "/applications/"+appID, nil), "application")
	assert.Equal(t, m{"is_application": true, "is_evaluator": false, "is_snippet": false}, app["flags"])
	// The same id is a workflow id; the slug namespace is shared.
	assert.Equal(t, appID, obj(t, s.ok(t, "GET", "/workflows/"+appID, nil), "workflow")["id"])
	assert.Equal(t, http.StatusConflict, s.do(t, "POST", "/evaluators", m{"evaluator": m{"slug": "shop"}}).status)

	apps := list(t, s.ok(t, "POST", "/applications/query", m{}), "applications")
	require.Len(t, apps, 1, "the application query never returns evaluators")
	assert.Equal(t, appID, apps[0].(map[string]any)["id"])
	evs := list(t, s.ok(t, "POST", "/evaluators/query", m{}), "evaluators")
	require.Len(t, evs, 1)
	assert.Equal(t, evID, evs[0].(map[string]any)["id"])
	assert.Equal(t, float64(2), s.ok(t, "POST", "/workflows/query", m{})["count"])

	rev := obj(t, commitWF(t, s, "applications", "application", appVariant, m{"uri": "agenta:builtin:chat:v0"}), "application_revision")
	assert.Equal(t, appID, rev["workflow_id"])
	assert.Equal(t, appVariant, rev["workflow_variant_id"])
	assert.Equal(t, "shop", rev["workflow_slug"])
	assert.Equal(t, servicesURL+"/chat/v0", obj(t, rev, "data")["url"])
	assert.Equal(t, true, obj(t, rev, "flags")["is_application"])
	assert.Equal(t, true, obj(t, rev, "flags")["is_chat"])

	// Evaluators cannot be renamed; mismatches are an empty 200 there.
	r := s.do(t, "PUT", "/evaluators/"+evID, m{"evaluator": m{"id": evID, "name": "other"}})
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Contains(t, string(r.body), "Renaming evaluators")
	assert.Equal(t, float64(0), s.ok(t, "PUT", "/evaluators/"+evID, m{"evaluator": m{"id": appID}})["count"])
	assert.Equal(t, http.StatusBadRequest, s.do(t, "PUT", "/applications/"+appID, m{"application": m{"id": evID}}).status)
	// Omitting flags on an application edit clears them (as on the compatible platform).
	edited := obj(t, s.ok(t, "PUT", "/applications/"+appID, m{"application": m{"id": appID, "description": "x"}}), "application")
	assert.NotContains(t, edited, "flags")
}

func TestSimpleApplicationsAndEvaluators(t *testing.T) {
	s := newServer(t)
	created := obj(t, s.ok(t, "POST", "/simple/applications", m{"application": m{"slug": "sa", "name": "SA",
		"data": m{"uri": "svc:builtin:completion:v0", "parameters": m{"prompt": m{"messages": []m{{"role": "user", "content": "{{q}}"}}}}}}}), "application")
	id := str(created["id"])
	assert.Equal(t, servicesURL+"/completion/v0", obj(t, created, "data")["url"])
	assert.Len(t, obj(t, created, "flags"), 17)
	assert.Equal(t, true, obj(t, created, "flags")["is_application"])
	rev := obj(t, s.ok(t, "GET", "/applications/revisions/"+str(created["revision_id"]), nil), "application_revision")
	assert.Equal(t, "1", rev["version"], "simple create commits v0 and v1")

	got := obj(t, s.ok(t, "GET", "/simple/applications/"+id, nil), "application")
	assert.Equal(t, created["revision_id"], got["revision_id"])
	edited := obj(t, s.ok(t, "PUT", "/simple/applications/"+id, m{"application": m{"id": id, "description": "new"}}), "application")
	assert.Equal(t, "new", edited["description"])
	assert.Equal(t, "SA", edited["name"])
	assert.Equal(t, obj(t, created, "data")["parameters"], obj(t, edited, "data")["parameters"], "an edit without data keeps the data")
	assert.Equal(t, http.StatusBadRequest, s.do(t, "PUT", "/simple/applications/"+id, m{"application": m{"id": "01900000-0000-7000-8000-000000000000"}}).status)

	ev := obj(t, s.ok(t, "POST", "/simple/evaluators", m{"evaluator": m{"slug": "em", "name": "EM",
		"data": m{"uri": "agenta:builtin:auto_exact_match:v3", "url": "http://drop.me", "parameters": m{"correct_answer_key": "answer"}}}}), "evaluator")
	d := obj(t, ev, "data")
	assert.Equal(t, "svc:builtin:auto_exact_match:v0", d["uri"])
	out := obj(t, d, "schemas", "outputs")
	assert.Equal(t, []any{"success"}, out["required"])
	assert.Contains(t, obj(t, d, "schemas", "parameters", "properties"), "correct_answer_key")
	assert.Equal(t, true, obj(t, ev, "flags")["is_evaluator"])

	// A client outputs schema without a uri round-trips exactly.
	x := m{"type": "object", "properties": m{"stars": m{"type": "integer"}}}
	ev2 := obj(t, s.ok(t, "POST", "/simple/evaluators", m{"evaluator": m{"slug": "human", "data": m{"schemas": m{"outputs": x}}}}), "evaluator")
	assert.Equal(t, x, obj(t, ev2, "data", "schemas", "outputs"))

	items := list(t, s.ok(t, "POST", "/simple/evaluators/query", m{}), "evaluators")
	require.Len(t, items, 2)
	assert.NotContains(t, items[0], "revision_id")
	assert.Len(t, list(t, s.ok(t, "POST", "/simple/applications/query", m{}), "applications"), 1)
	assert.Len(t, list(t, s.ok(t, "POST", "/simple/evaluators/query", m{"evaluator": m{"flags": m{"is_managed": true}}}), "evaluators"), 1)

	r := s.do(t, "PUT", "/simple/evaluators/"+str(ev["id"]), m{"evaluator": m{"id": ev["id"], "name": "renamed"}})
	assert.Equal(t, http.StatusBadRequest, r.status)
	arch := obj(t, s.ok(t, "POST", "/simple/evaluators/"+str(ev["id"])+"/archive", nil), "evaluator")
	assert.NotNil(t, arch["deleted_at"])
	assert.Len(t, list(t, s.ok(t, "POST", "/simple/evaluators/query", m{}), "evaluators"), 1)
	v := obj(t, s.ok(t, "GET", "/evaluators/variants/"+str(ev["variant_id"]), nil), "evaluator_variant")
	assert.NotNil(t, v["deleted_at"], "simple evaluator archive covers the variant")
	s.ok(t, "POST", "/simple/evaluators/"+str(ev["id"])+"/unarchive", nil)

	assert.Equal(t, float64(0), s.ok(t, "GET", "/simple/evaluators/01900000-0000-7000-8000-000000000000", nil)["count"])
	r = s.do(t, "POST", "/simple/evaluators", m{"evaluator": m{"slug": "bad", "data": m{"uri": "svc:builtin:x:v0", "oops": 1}}})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Contains(t, string(r.body), "oops")
	assert.Equal(t, float64(0), s.ok(t, "POST", "/simple/evaluators/query", m{"include_archived": true, "evaluator": m{"slug": "bad"}})["count"], "nothing half-written")
}

func TestWorkflowRetrieveRules(t *testing.T) {
	s := newServer(t)
	id, vid := mkWorkflow(t, s, "workflows", "workflow", "rt")
	r0 := obj(t, commitWF(t, s, "workflows", "workflow", vid, m{"parameters": m{"n": 0}}), "workflow_revision")
	r1 := obj(t, commitWF(t, s, "workflows", "workflow", vid, m{"parameters": m{"n": 1}}), "workflow_revision")
	retrieve := func(body m) map[string]any {
		return s.ok(t, "POST", "/workflows/revisions/retrieve", body)
	}
	idOf := func(res map[string]any) any { return obj(t, res, "workflow_revision")["id"] }

	assert.Equal(t, r0["id"], idOf(retrieve(m{"workflow_revision_ref": m{"id": r0["id"]}})))
	assert.Equal(t, r0["id"], idOf(retrieve(m{"workflow_revision_ref": m{"slug": r0["slug"]}})))
	assert.Equal(t, r0["id"], idOf(retrieve(m{"workflow_variant_ref": m{"id": vid}, "workflow_revision_ref": m{"version": "0"}})))
	assert.Equal(t, r0["id"], idOf(retrieve(m{"workflow_variant_ref": m{"slug": "rt-main"}, "workflow_revision_ref": m{"version": "0"}})))
	assert.Equal(t, r1["id"], idOf(retrieve(m{"workflow_variant_ref": m{"id": vid}})))
	assert.Equal(t, r1["id"], idOf(retrieve(m{"workflow_ref": m{"slug": "rt"}})), "artifact -> default variant -> latest")
	assert.Equal(t, r0["id"], idOf(retrieve(m{"workflow_ref": m{"id": id}, "workflow_revision_ref": m{"version": "0"}})))
	info := obj(t, retrieve(m{"workflow_ref": m{"id": id}}), "retrieval_info", "references")
	assert.Equal(t, "1", obj(t, info, "workflow_revision")["version"])

	for name, body := range map[string]m{
		"nothing":               {},
		"variant version only":  {"workflow_variant_ref": m{"version": "1"}},
		"revision version only": {"workflow_revision_ref": m{"version": "1"}},
		"inconsistent slug":     {"workflow_ref": m{"slug": "other"}, "workflow_revision_ref": m{"id": r0["id"]}},
		"inconsistent version":  {"workflow_variant_ref": m{"id": vid}, "workflow_revision_ref": m{"id": r0["id"], "version": "1"}},
		"key without env":       {"workflow_ref": m{"id": id}, "key": "rt.revision"},
	} {
		r := s.do(t, "POST", "/workflows/revisions/retrieve", body)
		assert.Equal(t, http.StatusBadRequest, r.status, "%s: %s", name, r.body)
	}
	assert.Equal(t, float64(0), retrieve(m{"workflow_ref": m{"slug": "unknown"}})["count"])
	assert.Equal(t, float64(0), retrieve(m{"workflow_variant_ref": m{"id": vid}, "workflow_revision_ref": m{"version": "9"}})["count"])
}

func TestDeployAndRetrieveThroughEnvironments(t *testing.T) {
	s := newServer(t)
	env := obj(t, s.ok(t, "POST", "/simple/environments", m{"environment": m{"slug": "production", "name": "Production"}}), "environment")
	app := obj(t, s.ok(t, "POST", "/simple/applications", m{"application": m{"slug": "bot", "data": m{"uri": "svc:builtin:chat:v0", "parameters": m{"v": 1}}}}), "application")
	v1 := str(app["revision_id"])

	r := s.do(t, "POST", "/applications/revisions/deploy", m{"environment_ref": m{"slug": "production"}})
	assert.Equal(t, http.StatusBadRequest, r.status)
	r = s.do(t, "POST", "/applications/revisions/deploy", m{"application_ref": m{"slug": "bot"}})
	assert.Equal(t, http.StatusBadRequest, r.status)
	r = s.do(t, "POST", "/applications/revisions/deploy", m{"application_ref": m{"slug": "nope"}, "environment_ref": m{"slug": "production"}})
	assert.Equal(t, http.StatusNotFound, r.status)
	r = s.do(t, "POST", "/applications/revisions/deploy", m{"application_ref": m{"slug": "bot"}, "environment_ref": m{"slug": "nope"}})
	assert.Equal(t, http.StatusNotFound, r.status)

	dep := obj(t, s.ok(t, "POST", "/applications/revisions/deploy", m{"application_variant_ref": m{"id": app["variant_id"]}, "environment_ref": m{"slug": "production"}, "message": "ship"}), "application_revision")
	assert.Equal(t, v1, dep["id"])

	byKey := s.do(t, "POST", "/applications/revisions/retrieve", m{"environment_ref": m{"slug": "production"}, "key": "bot.revision"})
	require.Equal(t, http.StatusOK, byKey.status, string(byKey.body))
	got := byKey.json(t)
	assert.Equal(t, v1, obj(t, got, "application_revision")["id"])
	assert.Equal(t, servicesURL+"/chat/v0", obj(t, got, "application_revision", "data")["url"])
	ri := obj(t, got, "retrieval_info")
	assert.Equal(t, m{"key": "bot.revision"}, ri["selector"])
	assert.Equal(t, env["id"], obj(t, ri, "references", "environment")["id"])
	tag := byKey.header.Get("ETag")
	require.NotEmpty(t, tag)

	// The key derives from the application slug.
	derived := s.ok(t, "POST", "/applications/revisions/retrieve", m{"environment_ref": m{"slug": "production"}, "application_ref": m{"slug": "bot"}})
	assert.Equal(t, v1, obj(t, derived, "application_revision")["id"])
	derived = s.ok(t, "POST", "/applications/revisions/retrieve", m{"environment_ref": m{"slug": "production"}, "application_ref": m{"id": app["id"]}})
	assert.Equal(t, v1, obj(t, derived, "application_revision")["id"])
	// A workflow retrieve reads the application's deployment too.
	assert.Equal(t, v1, obj(t, s.ok(t, "POST", "/workflows/revisions/retrieve", m{"environment_ref": m{"slug": "production"}, "key": "bot.revision"}), "workflow_revision")["id"])

	// If-None-Match of the current answer: 304 with no body.
	poll := func(inm string) resp {
		req, _ := http.NewRequest("POST", s.url+"/applications/revisions/retrieve", strings.NewReader(`{"environment_ref":{"slug":"production"},"key":"bot.revision"}`))
		req.Header.Set("If-None-Match", inm)
		setScope(req, s)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		return resp{status: res.StatusCode, header: res.Header}
	}
	assert.Equal(t, http.StatusNotModified, poll(tag).status)
	assert.Equal(t, http.StatusOK, poll(`"other"`).status)

	for name, c := range map[string]struct {
		body   m
		status int
	}{
		"key without env":         {m{"key": "bot.revision"}, http.StatusBadRequest},
		"env without key or slug": {m{"environment_ref": m{"slug": "production"}}, http.StatusBadRequest},
		"unknown app id":          {m{"environment_ref": m{"slug": "production"}, "application_ref": m{"id": "01900000-0000-7000-8000-000000000000"}}, http.StatusBadRequest},
		"unknown key":             {m{"environment_ref": m{"slug": "production"}, "key": "other.revision"}, http.StatusNotFound},
		"unknown environment":     {m{"environment_ref": m{"slug": "staging"}, "key": "bot.revision"}, http.StatusNotFound},
		"inconsistent variant":    {m{"environment_ref": m{"slug": "production"}, "key": "bot.revision", "application_variant_ref": m{"slug": "zzz"}}, http.StatusBadRequest},
		"evaluator keys only":     {m{"environment_ref": m{"slug": "production"}, "key": "bot.revision"}, http.StatusNotFound},
	} {
		path := "/applications/revisions/retrieve"
		if name == "evaluator keys only" {
			path = "/evaluators/revisions/retrieve"
		}
		r := s.do(t, "POST", path, c.body)
		assert.Equal(t, c.status, r.status, "%s: %s", name, r.body)
	}

	// A new deployment changes the answer, its tag, and keeps history.
	v2 := obj(t, s.ok(t, "PUT", "/simple/applications/"+str(app["id"]), m{"application": m{"id": app["id"], "data": m{"uri": "svc:builtin:chat:v0", "parameters": m{"v": 2}}}}), "application")
	s.ok(t, "POST", "/applications/revisions/deploy", m{"application_revision_ref": m{"id": v2["revision_id"]}, "environment_ref": m{"slug": "production"}})
	assert.Equal(t, http.StatusOK, poll(tag).status)
	now := s.ok(t, "POST", "/applications/revisions/retrieve", m{"environment_ref": m{"slug": "production"}, "key": "bot.revision"})
	assert.Equal(t, v2["revision_id"], obj(t, now, "application_revision")["id"])
	// Every earlier deployment stays retrievable as an environment revision.
	old := s.ok(t, "POST", "/applications/revisions/retrieve", m{"environment_ref": m{"slug": "production"}, "environment_revision_ref": m{"version": "2"}, "key": "bot.revision"})
	assert.Equal(t, v1, obj(t, old, "application_revision")["id"])
	envLog := list(t, s.ok(t, "POST", "/environments/revisions/log", m{"environment_revisions": m{"environment_id": env["id"]}}), "environment_revisions")
	assert.Len(t, envLog, 4, "v0, v1 of the simple create and two deployments")

	// Deploying a second app keeps the first key; a custom key works.
	other := obj(t, s.ok(t, "POST", "/simple/applications", m{"application": m{"slug": "bot2", "data": m{"uri": "svc:builtin:completion:v0"}}}), "application")
	s.ok(t, "POST", "/applications/revisions/deploy", m{"application_ref": m{"id": other["id"]}, "environment_ref": m{"id": env["id"]}, "key": "custom"})
	head := obj(t, s.ok(t, "POST", "/environments/revisions/retrieve", m{"environment_ref": m{"slug": "production"}}), "environment_revision")
	refs := obj(t, head, "data", "references")
	assert.Contains(t, refs, "bot.revision")
	assert.Contains(t, refs, "custom")
	assert.Equal(t, m{"id": other["id"]}, obj(t, refs, "custom", "application"))
}

func TestEnvironments(t *testing.T) {
	s := newServer(t)
	e := obj(t, s.ok(t, "POST", "/environments", m{"environment": m{"slug": "dev", "flags": m{"is_guarded": true, "junk": 1}}}), "environment")
	assert.Equal(t, m{"is_guarded": true}, e["flags"])
	v := obj(t, s.ok(t, "POST", "/environments/variants", m{"environment_variant": m{"slug": "dev-main", "environment_id": e["id"]}}), "environment_variant")
	commit := func(rev m) resp {
		rev["environment_variant_id"] = v["id"]
		return s.do(t, "POST", "/environments/revisions/commit", m{"environment_revision": rev})
	}
	ref := func(id string) m { return m{"application": m{"id": id}} }
	a, b := "01900000-0000-7000-8000-00000000000a", "01900000-0000-7000-8000-00000000000b"
	assert.Equal(t, http.StatusBadRequest, commit(m{}).status)
	assert.Equal(t, http.StatusBadRequest, commit(m{"data": m{}, "delta": m{}}).status)
	r := commit(m{"data": m{"references": m{}, "other": 1}})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Contains(t, string(r.body), "other")
	require.Equal(t, http.StatusOK, commit(m{"data": m{"references": m{"a": ref(a)}}}).status)
	require.Equal(t, http.StatusOK, commit(m{"delta": m{"set": m{"b": ref(b)}}}).status)
	r = commit(m{"delta": m{"remove": []string{"a"}}})
	require.Equal(t, http.StatusOK, r.status)
	refs := obj(t, r.json(t), "environment_revision", "data", "references")
	assert.Equal(t, m{"b": ref(b)}, refs)
	r = commit(m{"delta": m{"remove": []string{"b"}}})
	assert.Nil(t, obj(t, r.json(t), "environment_revision", "data")["references"], "an emptied map is null")
	// The next delta starts from the newest revision that has references.
	r = commit(m{"delta": m{"set": m{"c": ref(a)}}})
	assert.Equal(t, m{"b": ref(b), "c": ref(a)}, obj(t, r.json(t), "environment_revision", "data", "references"))

	assert.Equal(t, float64(0), s.ok(t, "POST", "/environments/revisions/retrieve", m{})["count"])
	assert.Equal(t, http.StatusBadRequest, s.do(t, "POST", "/environments/revisions/retrieve", m{"environment_revision_ref": m{"version": "1"}}).status)
	res := s.ok(t, "POST", "/environments/revisions/resolve", m{"environment_ref": m{"slug": "dev"}})
	assert.Contains(t, res, "resolution_info")

	simple := obj(t, s.ok(t, "POST", "/simple/environments", m{"environment": m{"slug": "staging", "data": m{"references": m{"x": ref(a)}}}}), "environment")
	sid := str(simple["id"])
	assert.Equal(t, m{"x": ref(a)}, obj(t, simple, "data", "references"))
	g := obj(t, s.ok(t, "POST", "/simple/environments/"+sid+"/guard", nil), "environment")
	assert.Equal(t, true, obj(t, g, "flags")["is_guarded"])
	g = obj(t, s.ok(t, "POST", "/simple/environments/"+sid+"/unguard", nil), "environment")
	assert.Equal(t, false, obj(t, g, "flags")["is_guarded"])
	ed := obj(t, s.ok(t, "PUT", "/simple/environments/"+sid, m{"environment": m{"id": sid, "name": "Staging"}}), "environment")
	assert.Nil(t, obj(t, ed, "data")["references"], "an edit without data leaves no references")
	assert.Equal(t, float64(0), s.ok(t, "PUT", "/simple/environments/"+sid, m{"environment": m{"id": a}})["count"])
	assert.Len(t, list(t, s.ok(t, "POST", "/simple/environments/query", m{}), "environments"), 2)
	s.ok(t, "POST", "/simple/environments/"+sid+"/archive", nil)
	assert.Len(t, list(t, s.ok(t, "POST", "/simple/environments/query", m{}), "environments"), 1)
	assert.NotContains(t, s.ok(t, "POST", "/environments/query", m{"windowing": m{"limit": 1}}), "windowing")
}

// TestSimpleSlugFromName: an application or evaluator created with a name
// and no slug (as the console creates them) gets its slug from the name,
// free in the project; with neither, the slug is missing (422 naming it).
func TestSimpleSlugFromName(t *testing.T) {
	s := newServer(t)
	app := func(name string) map[string]any {
		return obj(t, s.ok(t, "POST", "/simple/applications", m{"application": m{"name": name,
			"data": m{"uri": "svc:builtin:completion:v0", "parameters": m{"prompt": m{"messages": []m{{"role": "user", "content": "{{q}}"}}}}}}}), "application")
	}
	first := app("Capital checker")
	assert.Equal(t, "capital-checker", first["slug"])
	assert.Equal(t, "Capital checker", first["name"])
	assert.Equal(t, "capital-checker-2", app("Capital Checker!")["slug"], "a slug taken in the project gets a suffix")
	ev := obj(t, s.ok(t, "POST", "/simple/evaluators", m{"evaluator": m{"name": "Exact answer",
		"data": m{"uri": "agenta:builtin:auto_exact_match:v0", "parameters": m{"correct_answer_key": "answer"}}}}), "evaluator")
	assert.Equal(t, "exact-answer", ev["slug"])
	r := s.do(t, "POST", "/simple/applications", m{"application": m{"data": m{"uri": "svc:builtin:completion:v0"}}})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Contains(t, string(r.body), `"slug"`)
}
