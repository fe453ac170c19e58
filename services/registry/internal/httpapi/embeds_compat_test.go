package httpapi_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompatibleEmbeds replays the embeds the compatible platform's clients
// write: an embed without a selector inserts the whole of the target's
// data; the string form "@ag.embed[@ag.references[...], @ag.selector[...]]";
// an embed naming only an environment reads that environment revision's
// own data, without a key.
func TestCompatibleEmbeds(t *testing.T) {
	s := newServer(t)
	_, snipVar := mkWorkflow(t, s, "workflows", "workflow", "snip")
	snip := obj(t, commitWF(t, s, "workflows", "workflow", snipVar, m{"uri": "code", "parameters": m{"prompt": "be kind", "n": 2}}), "workflow_revision")
	snipData := obj(t, snip, "data")

	resolve := func(ps m) map[string]any {
		t.Helper()
		got := s.ok(t, "POST", "/workflows/revisions/resolve", m{"error_policy": "placeholder", "workflow_revision": m{"data": m{"parameters": ps}}})
		assert.Empty(t, list(t, obj(t, got, "resolution_info"), "errors"))
		return params(t, got)
	}
	p := resolve(m{
		"whole":    embedObj(m{"workflow": m{"slug": "snip"}}, ""),
		"colon":    "Say: @ag.embed[@ag.references[workflow.slug=snip], @ag.selector[path:parameters.prompt]]!",
		"equals":   "@ag.embed[@ag.references[workflow.slug=snip],@ag.selector[path=parameters.n]]",
		"revision": "@ag.embed[@ag.references[workflow_revision.slug=snip, workflow_revision.version=0], @ag.selector[parameters.prompt]]",
		"json":     `@ag.embed[@ag.references[{"workflow_revision": {"id": "` + str(snip["id"]) + `"}}], @ag.selector[{"path": "parameters.prompt"}]]`,
		"nosel":    "<@ag.embed[@ag.references[workflow.slug=snip]]>",
		"legacy":   "@ag.embed[workflow.slug=snip;path=parameters.prompt]",
	})
	assert.Equal(t, snipData, p["whole"], "no selector: all of data, not data.parameters")
	assert.Equal(t, "Say: be kind!", p["colon"])
	assert.Equal(t, "2", p["equals"])
	assert.Equal(t, "be kind", p["revision"])
	assert.Equal(t, "be kind", p["json"])
	assert.JSONEq(t, mustJSON(t, snipData), str(p["nosel"])[1:len(str(p["nosel"]))-1], "a string token without selector: all of data as compact JSON")
	assert.Equal(t, "be kind", p["legacy"], "our own string syntax stays an alias")

	// An environment alone: its revision's own data (what deploy wrote).
	s.ok(t, "POST", "/simple/environments", m{"environment": m{"slug": "production"}})
	s.ok(t, "POST", "/workflows/revisions/deploy", m{"workflow_revision_ref": m{"id": snip["id"]}, "environment_ref": m{"slug": "production"}, "key": "assistant"})
	envRev := obj(t, s.ok(t, "POST", "/environments/revisions/retrieve", m{"environment_ref": m{"slug": "production"}}), "environment_revision")
	envData := obj(t, envRev, "data")
	require.Contains(t, envData, "references")
	got := s.ok(t, "POST", "/workflows/revisions/resolve", m{"workflow_revision": m{"data": m{"parameters": m{
		"env":      m{"@ag.embed": m{"@ag.references": m{"environment": m{"slug": "production"}}}},
		"envrefs":  m{"@ag.embed": m{"@ag.references": m{"environment_revision": m{"id": envRev["id"]}}, "@ag.selector": m{"path": "references"}}},
		"envtoken": "@ag.embed[@ag.references[environment.slug=production], @ag.selector[path:references.assistant.workflow_revision.id]]",
	}}}})
	p = params(t, got)
	assert.Equal(t, envData, p["env"], "the environment revision's data, no key demanded")
	assert.Equal(t, envData["references"], p["envrefs"])
	assert.Equal(t, snip["id"], p["envtoken"])
	used := list(t, obj(t, got, "resolution_info"), "references_used")
	require.Len(t, used, 1, "one environment revision read")
	assert.Equal(t, envRev["id"], obj(t, used[0].(map[string]any), "environment_revision")["id"])
	assert.NotContains(t, used[0], "workflow_revision", "no workflow revision was read")
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
