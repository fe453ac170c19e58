package httpapi_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/services/registry/internal/tracingclient"
)

// referenceCatalog is the compatible platform's catalog structure, which
// ours must match key for key (prose and code aside).
func referenceCatalog(t *testing.T) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile("../catalog/templates.json")
	require.NoError(t, err)
	var ts []map[string]any
	require.NoError(t, json.Unmarshal(raw, &ts))
	return ts
}

func TestCatalogs(t *testing.T) {
	s := newServer(t)
	all := s.ok(t, "GET", "/workflows/catalog/templates?include_archived=true", nil)
	require.Equal(t, float64(27), all["count"])
	visible := 0
	for _, ref := range referenceCatalog(t) {
		key := str(ref["key"])
		got := obj(t, s.ok(t, "GET", "/workflows/catalog/templates/"+key, nil), "template")
		refData := ref["data"].(map[string]any)
		data := obj(t, got, "data")
		assert.Equal(t, strings.Replace(str(refData["uri"]), "agenta:", "svc:", 1), data["uri"], key)
		assert.True(t, strings.HasPrefix(str(data["uri"]), "svc:"), key)
		assert.Equal(t, ref["flags"], got["flags"], key)
		assert.Equal(t, refData["schemas"], data["schemas"], "%s: every parameter schema", key)
		assert.NotContains(t, got, "presets", "presets are not embedded")
		if !ref["flags"].(map[string]any)["is_archived"].(bool) {
			visible++
		}
		presets := list(t, s.ok(t, "GET", "/workflows/catalog/templates/"+key+"/presets", nil), "presets")
		refPresets, _ := ref["presets"].([]any)
		require.Len(t, presets, len(refPresets), key)
		for i, p := range refPresets {
			pk := str(p.(map[string]any)["key"])
			assert.Equal(t, pk, presets[i].(map[string]any)["key"])
			one := obj(t, s.ok(t, "GET", "/workflows/catalog/templates/"+key+"/presets/"+pk, nil), "preset")
			assert.Equal(t, data["uri"], obj(t, one, "data")["uri"], "%s/%s", key, pk)
			pf := obj(t, one, "flags")
			assert.Equal(t, got["flags"].(map[string]any)["is_evaluator"], pf["is_evaluator"], "role flags come from the template")
		}
	}
	assert.Equal(t, float64(visible), s.ok(t, "GET", "/workflows/catalog/templates", nil)["count"])
	body, _ := json.Marshal(all)
	assert.NotContains(t, string(body), "<omitted", "our own prose and code replace the removed text")
	assert.NotContains(t, string(body), "agenta:")

	evs := s.ok(t, "GET", "/evaluators/catalog/templates?include_archived=true", nil)
	assert.Equal(t, float64(24), evs["count"])
	assert.Equal(t, float64(18), s.ok(t, "GET", "/evaluators/catalog/templates", nil)["count"])
	apps := list(t, s.ok(t, "GET", "/applications/catalog/templates", nil), "templates")
	var keys []string
	for _, a := range apps {
		keys = append(keys, str(a.(map[string]any)["key"]))
	}
	assert.ElementsMatch(t, []string{"feedback", "hook", "code", "mock", "llm", "chat", "completion", "agent"}, keys)
	assert.Equal(t, float64(0), s.ok(t, "GET", "/applications/catalog/templates/auto_exact_match", nil)["count"])
	assert.Equal(t, float64(0), s.ok(t, "GET", "/workflows/catalog/templates/nope", nil)["count"])
	assert.Equal(t, float64(0), s.ok(t, "GET", "/workflows/catalog/templates/nope/presets", nil)["count"])
	assert.Equal(t, float64(0), s.ok(t, "GET", "/workflows/catalog/templates/auto_regex_test/presets/nope", nil)["count"])
	assert.Equal(t, float64(5), s.ok(t, "GET", "/workflows/catalog/templates?is_application=true&is_evaluator=true", nil)["count"])

	types := s.ok(t, "GET", "/workflows/catalog/types", nil)
	assert.Equal(t, float64(16), types["count"])
	pt := obj(t, s.ok(t, "GET", "/workflows/catalog/types/prompt-template", nil), "type", "json_schema")
	assert.Equal(t, "object", pt["type"])
	assert.Equal(t, "prompt-template", pt["x-ag-type"])
	model := obj(t, s.ok(t, "GET", "/workflows/catalog/types/model", nil), "type", "json_schema")
	assert.Equal(t, "grouped_choice", model["x-ag-type"])
	assert.Contains(t, model, "choices")
	r := s.do(t, "GET", "/workflows/catalog/types/x", nil)
	assert.Equal(t, http.StatusNotFound, r.status)
	assert.Contains(t, string(r.body), "Unknown ag-type: x")
	assert.Equal(t, float64(16), s.ok(t, "GET", "/applications/catalog/types", nil)["count"])
	assert.Equal(t, float64(4), s.ok(t, "GET", "/workflows/catalog/harnesses", nil)["count"])
	assert.Equal(t, http.StatusNotFound, s.do(t, "GET", "/workflows/catalog/harnesses/x", nil).status)
	assert.Equal(t, "claude", obj(t, s.ok(t, "GET", "/workflows/catalog/harnesses/claude", nil), "harness")["key"])
}

// TestEvaluatorFromPreset scaffolds an evaluator from a preset: template
// URI plus the preset's parameters; afterwards it is ordinary.
func TestEvaluatorFromPreset(t *testing.T) {
	s := newServer(t)
	p := obj(t, s.ok(t, "GET", "/evaluators/catalog/templates/auto_ai_critique/presets/hallucination", nil), "preset")
	pd := obj(t, p, "data")
	ev := obj(t, s.ok(t, "POST", "/simple/evaluators", m{"evaluator": m{"slug": "halluc", "name": p["name"], "data": pd}}), "evaluator")
	d := obj(t, ev, "data")
	assert.Equal(t, "svc:builtin:auto_ai_critique:v0", d["uri"])
	assert.Equal(t, pd["parameters"], d["parameters"])
	// auto_ai_critique's outputs follow parameters.json_schema.schema.
	want := obj(t, pd, "parameters", "json_schema", "schema")
	assert.Equal(t, want, obj(t, d, "schemas", "outputs"))
	assert.Contains(t, obj(t, d, "schemas", "parameters", "properties"), "prompt_template")

	// json_multi_field_match: one number per field plus aggregate_score.
	jm := obj(t, s.ok(t, "POST", "/simple/evaluators", m{"evaluator": m{"slug": "jm", "data": m{"uri": "svc:builtin:json_multi_field_match:v0",
		"parameters": m{"fields": []string{"a", "b"}, "correct_answer_key": "c"}}}}), "evaluator")
	props := obj(t, jm, "data", "schemas", "outputs", "properties")
	assert.ElementsMatch(t, []string{"aggregate_score", "a", "b"}, keysOf(props))
	lev := obj(t, s.ok(t, "POST", "/simple/evaluators", m{"evaluator": m{"slug": "lev", "data": m{"uri": "svc:builtin:auto_levenshtein_distance:v0"}}}), "evaluator")
	assert.ElementsMatch(t, []string{"score", "success"}, keysOf(obj(t, lev, "data", "schemas", "outputs", "properties")))

	// Afterwards: an ordinary evaluator, committed like any other. Its
	// parameters must satisfy the template's schema, which requires
	// prompt_template: the preset's, with another model.
	params := m{}
	for k, v := range obj(t, pd, "parameters") {
		params[k] = v
	}
	params["model"] = "gpt-4o"
	c := s.ok(t, "POST", "/evaluators/revisions/commit", m{"evaluator_revision_commit": m{"evaluator_variant_id": ev["variant_id"], "message": "tune",
		"data": m{"uri": "svc:builtin:auto_ai_critique:v0", "parameters": params}}})
	assert.Equal(t, "2", obj(t, c, "evaluator_revision")["version"])
	got := s.ok(t, "POST", "/evaluators/revisions/retrieve", m{"evaluator_variant_ref": m{"id": ev["variant_id"]}})
	assert.Equal(t, "gpt-4o", obj(t, got, "evaluator_revision", "data", "parameters")["model"])

	// The schema describes the messages for a form (items) but refuses no
	// message shape a client sends and the runtime reads: other roles,
	// content parts, extra fields, another response type.
	params["prompt_template"] = []any{
		m{"role": "developer", "content": "Grade {{outputs}}."},
		m{"role": "user", "name": "grader", "content": []any{m{"type": "text", "text": "{{inputs}}"}}},
	}
	params["response_type"] = "text"
	s.ok(t, "POST", "/evaluators/revisions/commit", m{"evaluator_revision_commit": m{"evaluator_variant_id": ev["variant_id"], "message": "parts",
		"data": m{"uri": "svc:builtin:auto_ai_critique:v0", "parameters": params}}})
}

func keysOf(mm map[string]any) []string {
	var ks []string
	for k := range mm {
		ks = append(ks, k)
	}
	return ks
}

func TestQueries(t *testing.T) {
	s := newServer(t)
	filtering := m{"operator": "and", "conditions": []m{{"field": "attributes", "key": "ag.type.trace", "value": "invocation"}}}
	created := obj(t, s.ok(t, "POST", "/simple/queries", m{"query": m{"slug": "errors", "flags": m{"x": true},
		"data": m{"formatting": m{"focus": "trace"}, "filtering": filtering, "windowing": m{"limit": 50, "order": "descending"}, "trace_ids": []string{"x"}}}}), "query")
	assert.Equal(t, m{}, created["flags"], "query flags are an empty model")
	d := obj(t, created, "data")
	assert.NotContains(t, d, "trace_ids", "only formatting, filtering and windowing persist")

	for name, data := range map[string]m{
		"unknown key":      {"select": 1},
		"bad operator":     {"filtering": m{"operator": "xor", "conditions": []m{}}},
		"bad condition op": {"filtering": m{"conditions": []m{{"field": "a", "operator": "near"}}}},
		"bad focus":        {"formatting": m{"focus": "log"}},
	} {
		r := s.do(t, "POST", "/simple/queries", m{"query": m{"slug": "q" + fmt.Sprint(len(name)), "data": data}})
		assert.Equal(t, http.StatusUnprocessableEntity, r.status, "%s: %s", name, r.body)
	}

	// Without include flags the tracing service is never called.
	plain := s.ok(t, "POST", "/queries/revisions/retrieve", m{"query_ref": m{"slug": "errors"}})
	assert.NotContains(t, obj(t, plain, "query_revision", "data"), "trace_ids")
	assert.Contains(t, plain, "retrieval_info")
	assert.Empty(t, s.tracing.calls)

	s.tracing.result = tracingclient.Result{TraceIDs: []string{"t2", "t1"}, Traces: []tracingclient.Trace{
		{TraceID: "t2", Spans: map[string]json.RawMessage{"s2": json.RawMessage(`{"span_id":"s2"}`)}},
		{TraceID: "t1", Spans: map[string]json.RawMessage{}}}}
	got := s.ok(t, "POST", "/queries/revisions/retrieve", m{"query_ref": m{"id": created["id"]}, "include_trace_ids": true, "windowing": m{"limit": 5}})
	assert.Equal(t, []any{"t2", "t1"}, obj(t, got, "query_revision", "data")["trace_ids"])
	assert.NotContains(t, obj(t, got, "query_revision", "data"), "traces")
	require.Len(t, s.tracing.calls, 1)
	call := s.tracing.calls[0]
	assert.Equal(t, "trace", call.Focus)
	assert.Equal(t, "agenta", call.Format)
	assert.JSONEq(t, `{"operator":"and","conditions":[{"field":"attributes","key":"ag.type.trace","value":"invocation"}]}`, string(call.Filtering))
	assert.JSONEq(t, `{"limit":5,"order":"descending"}`, string(call.Windowing), "request limit overrides the stored one")
	assert.Equal(t, s.project, s.tracing.scopes[0].ProjectID, "the caller's project scopes the query")

	got = s.ok(t, "POST", "/queries/revisions/retrieve", m{"query_ref": m{"slug": "errors"}, "include_traces": true})
	traces := list(t, obj(t, got, "query_revision", "data"), "traces")
	require.Len(t, traces, 2)
	assert.Equal(t, m{"span_id": "s2"}, obj(t, traces[0].(map[string]any), "spans", "s2"))
	assert.JSONEq(t, `{"limit":50,"order":"descending"}`, string(s.tracing.calls[1].Windowing))

	// The git surface: commit, variants, query, log.
	commit := s.ok(t, "POST", "/queries/revisions/commit", m{"query_revision": m{"query_variant_id": created["variant_id"], "data": m{"formatting": m{"focus": "span"}}}})
	assert.Equal(t, "2", obj(t, commit, "query_revision")["version"])
	s.ok(t, "POST", "/queries/revisions/retrieve", m{"query_ref": m{"slug": "errors"}, "include_trace_ids": true})
	assert.Equal(t, "span", s.tracing.calls[2].Focus)
	assert.Equal(t, float64(3), s.ok(t, "POST", "/queries/revisions/log", m{"query_revisions": m{"query_id": created["id"]}})["count"])
	assert.Equal(t, float64(0), s.ok(t, "POST", "/queries/revisions/retrieve", m{})["count"])
	assert.Equal(t, float64(0), s.ok(t, "GET", "/simple/queries/01900000-0000-7000-8000-000000000000", nil)["count"])
	assert.Len(t, list(t, s.ok(t, "POST", "/simple/queries/query", m{}), "queries"), 1)
	ed := obj(t, s.ok(t, "PUT", "/simple/queries/"+str(created["id"]), m{"query": m{"id": created["id"], "data": m{"filtering": filtering}}}), "query")
	assert.Equal(t, filtering["operator"], obj(t, ed, "data", "filtering")["operator"])
}

// TestCommitsNeverAlterEarlierRevisions commits random sequences of data,
// legacy deltas, ordered operations and stale bases to one workflow
// variant and checks after every step that each earlier revision still
// reads exactly as it did when it was committed.
func TestCommitsNeverAlterEarlierRevisions(t *testing.T) {
	s := newServer(t)
	_, vid := mkWorkflow(t, s, "workflows", "workflow", "prop")
	seed := int64(20261121)
	rng := rand.New(rand.NewSource(seed))
	seen := map[string]string{} // revision id -> its JSON data at commit
	var order []string
	headID := ""
	for step := 0; step < 60; step++ {
		key := fmt.Sprintf("k%d", rng.Intn(4))
		val := rng.Intn(3)
		var rev m
		switch op := rng.Intn(5); {
		case op == 0 || headID == "":
			rev = m{"data": m{"uri": "svc:custom:hook:v0", "url": "https://h.example.com", "parameters": m{key: val}}}
		case op == 1:
			rev = m{"delta": m{"set": m{"parameters": m{key: m{"n": val}}}}}
		case op == 2:
			rev = m{"delta": m{"remove": []string{"parameters." + key}}}
		case op == 3:
			rev = m{"base_revision_id": headID, "delta": m{"operations": []m{{"operation": "set", "target": []any{"parameters", key}, "value": val}}}}
		default:
			stale := headID
			if len(order) > 1 {
				stale = order[rng.Intn(len(order)-1)]
			}
			rev = m{"base_revision_id": stale, "data": m{"parameters": m{key: val}}}
		}
		rev["workflow_variant_id"] = vid
		r := s.do(t, "POST", "/workflows/revisions/commit", m{"workflow_revision": rev})
		require.Contains(t, []int{http.StatusOK, http.StatusConflict}, r.status, "seed %d step %d: %s", seed, step, r.body)
		if r.status == http.StatusOK {
			out := r.json(t)
			h := obj(t, out, "workflow_revision")
			id := str(h["id"])
			if out["status"] == "committed" {
				raw, _ := json.Marshal(h["data"])
				require.NotContains(t, seen, id)
				seen[id] = string(raw)
				order = append(order, id)
				require.Equal(t, fmt.Sprint(len(order)-1), h["version"], "versions stay dense")
			}
			headID = id
		}
		for id, want := range seen {
			got := obj(t, s.ok(t, "GET", "/workflows/revisions/"+id, nil), "workflow_revision")
			raw, _ := json.Marshal(got["data"])
			require.JSONEq(t, want, string(raw), "seed %d step %d: revision %s changed", seed, step, id)
		}
	}
	require.NotEmpty(t, order)
}
