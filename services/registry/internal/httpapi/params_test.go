package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fieldLocs returns the loc of every entry of a 422 body, joined with ".".
func fieldLocs(t *testing.T, r resp) []string {
	t.Helper()
	require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
	var b struct {
		Detail []struct {
			Loc []any  `json:"loc"`
			Msg string `json:"msg"`
		} `json:"detail"`
	}
	require.NoError(t, json.Unmarshal(r.body, &b), string(r.body))
	var out []string
	for _, d := range b.Detail {
		s := ""
		for i, p := range d.Loc {
			if i > 0 {
				s += "."
			}
			s += jsonText(p)
		}
		out = append(out, s)
	}
	return out
}

func jsonText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestEvaluatorParametersFollowTheTemplateSchema: data.parameters of a
// catalog handler are checked against the template's parameters schema on
// every route that writes a revision (simple create and edit, git commit
// with data or delta, through /evaluators and /workflows alike): a 422
// naming each offending field, and nothing committed.
func TestEvaluatorParametersFollowTheTemplateSchema(t *testing.T) {
	s := newServer(t)
	bad := m{"correct_answer_key": 42, "bogus": true}
	em := func(params any) m { return m{"uri": "svc:builtin:auto_exact_match:v0", "parameters": params} }

	// Simple create.
	r := s.do(t, "POST", "/simple/evaluators", m{"evaluator": m{"slug": "em-bad", "data": em(bad)}})
	assert.ElementsMatch(t, []string{"body.evaluator.data.parameters.bogus", "body.evaluator.data.parameters.correct_answer_key"}, fieldLocs(t, r))
	assert.Contains(t, string(r.body), "Extra inputs are not permitted")
	assert.EqualValues(t, 0, s.ok(t, "POST", "/simple/evaluators/query", m{"include_archived": true, "evaluator": m{"slug": "em-bad"}})["count"], "nothing half-written")
	// The other platform's provider alias names the same template.
	r = s.do(t, "POST", "/simple/evaluators", m{"evaluator": m{"slug": "em-bad", "data": m{"uri": "agenta:builtin:auto_exact_match:v0", "parameters": m{"correct_answer_key": 42}}}})
	assert.Equal(t, []string{"body.evaluator.data.parameters.correct_answer_key"}, fieldLocs(t, r))

	// Valid parameters, and none at all, are accepted.
	ev := obj(t, s.ok(t, "POST", "/simple/evaluators", m{"evaluator": m{"slug": "em", "data": em(m{"correct_answer_key": "gold"})}}), "evaluator")
	s.ok(t, "POST", "/simple/evaluators", m{"evaluator": m{"slug": "em-default", "data": m{"uri": "svc:builtin:auto_exact_match:v0"}}})

	// Simple edit.
	r = s.do(t, "PUT", "/simple/evaluators/"+str(ev["id"]), m{"evaluator": m{"id": ev["id"], "data": em(bad)}})
	assert.ElementsMatch(t, []string{"body.evaluator.data.parameters.bogus", "body.evaluator.data.parameters.correct_answer_key"}, fieldLocs(t, r))

	// Git commit, with data and with a delta, on /evaluators and /workflows.
	vid := str(ev["variant_id"])
	log := func() any {
		return s.ok(t, "POST", "/evaluators/revisions/log", m{"evaluator_revisions": m{"evaluator_variant_id": vid}})["count"]
	}
	before := log()
	r = s.do(t, "POST", "/evaluators/revisions/commit", m{"evaluator_revision": m{"evaluator_variant_id": vid, "data": em(bad)}})
	assert.ElementsMatch(t, []string{"body.evaluator_revision.data.parameters.bogus", "body.evaluator_revision.data.parameters.correct_answer_key"}, fieldLocs(t, r))
	r = s.do(t, "POST", "/evaluators/revisions/commit", m{"evaluator_revision_commit": m{"evaluator_variant_id": vid, "data": em(bad)}})
	assert.ElementsMatch(t, []string{"body.evaluator_revision_commit.data.parameters.bogus", "body.evaluator_revision_commit.data.parameters.correct_answer_key"}, fieldLocs(t, r))
	r = s.do(t, "POST", "/evaluators/revisions/commit", m{"evaluator_revision": m{"evaluator_variant_id": vid,
		"delta": m{"set": m{"parameters": m{"correct_answer_key": 42}}}}})
	assert.Equal(t, []string{"body.evaluator_revision.delta.parameters.correct_answer_key"}, fieldLocs(t, r))
	r = s.do(t, "POST", "/workflows/revisions/commit", m{"workflow_revision": m{"workflow_variant_id": vid, "data": em(bad)}})
	assert.ElementsMatch(t, []string{"body.workflow_revision.data.parameters.bogus", "body.workflow_revision.data.parameters.correct_answer_key"}, fieldLocs(t, r))
	assert.Equal(t, before, log(), "no refused commit wrote a revision")

	// Required properties, types deep inside, and enums are checked too.
	r = s.do(t, "POST", "/simple/evaluators", m{"evaluator": m{"slug": "re", "data": m{"uri": "svc:builtin:auto_regex_test:v0", "parameters": m{"regex_should_match": true}}}})
	assert.Equal(t, []string{"body.evaluator.data.parameters.regex_pattern"}, fieldLocs(t, r))
	assert.Contains(t, string(r.body), "Field required")
	r = s.do(t, "POST", "/simple/evaluators", m{"evaluator": m{"slug": "mt", "data": m{"uri": "svc:builtin:match:v0",
		"parameters": m{"matchers": []m{{"target": "x", "mode": "fuzzy"}}, "score": "weighted"}}}})
	assert.Equal(t, []string{"body.evaluator.data.parameters.matchers.0.mode"}, fieldLocs(t, r))

	// A URI outside the catalog, or not ours, is not checked.
	s.ok(t, "POST", "/simple/evaluators", m{"evaluator": m{"slug": "own", "data": m{"uri": "acme:builtin:auto_exact_match:v0", "url": "https://e.example.com", "parameters": bad}}})
	s.ok(t, "POST", "/simple/evaluators", m{"evaluator": m{"slug": "hook", "data": m{"uri": "svc:custom:hook:v0", "url": "https://h.example.com", "parameters": bad}}})
}

// TestCatalogParametersAreValid: every preset's parameters pass the check,
// so scaffolding from a preset (as clients and the seeded defaults do) is
// never refused; so does every template's, except those whose defaults
// leave out a required property the user must fill in (a matcher, a
// prefix): those are refused naming exactly that property.
func TestCatalogParametersAreValid(t *testing.T) {
	s := newServer(t)
	incomplete := map[string]string{"match": "matchers", "auto_starts_with": "prefix", "auto_ends_with": "suffix",
		"auto_contains": "substring", "auto_contains_any": "substrings", "auto_contains_all": "substrings"}
	for _, role := range []string{"evaluators", "applications"} {
		key := role[:len(role)-1]
		tpls := list(t, s.ok(t, "GET", "/"+role+"/catalog/templates?include_archived=true", nil), "templates")
		require.NotEmpty(t, tpls)
		for _, tv := range tpls {
			tpl := tv.(map[string]any)
			tk := str(tpl["key"])
			body := m{key: m{"slug": role + "-" + tk, "data": tpl["data"]}}
			if field, ok := incomplete[tk]; ok {
				r := s.do(t, "POST", "/simple/"+role, body)
				assert.Equal(t, []string{"body." + key + ".data.parameters." + field}, fieldLocs(t, r), tk)
			} else {
				s.ok(t, "POST", "/simple/"+role, body)
			}
			presets := list(t, s.ok(t, "GET", "/"+role+"/catalog/templates/"+tk+"/presets?include_archived=true", nil), "presets")
			for _, pv := range presets {
				p := pv.(map[string]any)
				s.ok(t, "POST", "/simple/"+role, m{key: m{"slug": role + "-" + tk + "-" + str(p["key"]), "data": p["data"]}})
			}
		}
	}
}
