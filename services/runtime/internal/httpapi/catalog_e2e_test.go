package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// catalogEntry is a template or preset as the registry's catalog serves it.
type catalogEntry struct {
	Key   string `json:"key"`
	Flags struct {
		IsArchived bool `json:"is_archived"`
	} `json:"flags"`
	Data struct {
		URI     string `json:"uri"`
		Schemas struct {
			Parameters struct {
				Required []string `json:"required"`
			} `json:"parameters"`
		} `json:"schemas"`
		Parameters map[string]any `json:"parameters"`
	} `json:"data"`
}

// everyCatalogEvaluatorWorksWithItsDefaults takes every evaluator
// template and preset of the catalog (archived ones too: stored evaluators
// still use them), exactly as the console's "Create from template" page
// starts it, and runs it on one sample through the gateway and the real
// runtime (the judges on the local model server). An entry whose defaults
// are complete must succeed; one that needs a value no default can give
// (a webhook URL, the fields a JSON match reads) must say which parameter
// to fill with a 4xx, never fail on its own defaults. The human and
// application-like templates (feedback, hook, code, mock) are not run by
// an evaluation on their own and are left out. It runs as a subtest of
// TestInvokeThroughTheGateway, on that test's platform.
func everyCatalogEvaluatorWorksWithItsDefaults(t *testing.T, p *platform, key string) {

	r := p.do(t, "GET", "/api/evaluators/catalog/templates/?include_archived=true", key, nil, nil)
	require.Equal(t, 200, r.status, string(r.body))
	var tpls struct {
		Templates []catalogEntry `json:"templates"`
	}
	require.NoError(t, json.Unmarshal(r.body, &tpls))
	require.NotEmpty(t, tpls.Templates)

	type entry struct {
		name     string
		uri      string
		params   map[string]any
		required []string
	}
	var entries []entry
	for _, tpl := range tpls.Templates {
		if strings.Contains(tpl.Data.URI, ":custom:") {
			continue
		}
		entries = append(entries, entry{tpl.Key, tpl.Data.URI, tpl.Data.Parameters, tpl.Data.Schemas.Parameters.Required})
		r := p.do(t, "GET", "/api/evaluators/catalog/templates/"+url.PathEscape(tpl.Key)+"/presets/?include_archived=true", key, nil, nil)
		require.Equal(t, 200, r.status, string(r.body))
		var pre struct {
			Presets []catalogEntry `json:"presets"`
		}
		require.NoError(t, json.Unmarshal(r.body, &pre))
		for _, ps := range pre.Presets {
			params := ps.Data.Parameters
			if params == nil {
				params = tpl.Data.Parameters
			}
			entries = append(entries, entry{tpl.Key + "/" + ps.Key, tpl.Data.URI, params, tpl.Data.Schemas.Parameters.Required})
		}
	}
	require.Greater(t, len(entries), 20, "the catalog lists its evaluators")

	// One sample every default can read: the testcase with its expected
	// answer under the catalog's default correct_answer_key, and the
	// application's answer; the JSON evaluators get the same as JSON.
	text := map[string]any{"country": "France", "question": "What is the capital of France?", "correct_answer": "Paris"}
	asJSON := map[string]any{"country": "France", "correct_answer": `{"capital": "Paris"}`}
	jsonKeys := map[string]bool{"auto_json_diff": true, "auto_contains_json": true, "field_match_test": true, "json_multi_field_match": true}
	var failed []string
	start := time.Now()
	for _, e := range entries {
		ukey := strings.Split(e.uri, ":")[2]
		params := e.params
		if params == nil {
			params = map[string]any{}
		}
		inputs, output := text, any("Paris")
		if jsonKeys[ukey] {
			inputs, output = asJSON, map[string]any{"capital": "Paris"}
		}
		r := p.do(t, "POST", "/services/"+ukey+"/v0/invoke", key, nil, map[string]any{
			"data": map[string]any{"parameters": params, "inputs": inputs, "outputs": output}})
		// A required parameter the default leaves absent or empty is one
		// the user fills in (the webhook's URL, the fields to match).
		var toFill []string
		for _, f := range e.required {
			if v, ok := params[f]; !ok || v == nil || fmt.Sprint(v) == "[]" {
				toFill = append(toFill, f)
			}
		}
		sort.Strings(toFill)
		named := false
		for _, f := range toFill {
			named = named || strings.Contains(string(r.body), f)
		}
		switch {
		case len(toFill) == 0 && r.status != 200:
			failed = append(failed, fmt.Sprintf("%s: HTTP %d %s", e.name, r.status, r.body))
		case len(toFill) > 0 && r.status != 200 && (r.status >= 500 || !named):
			failed = append(failed, fmt.Sprintf("%s (to fill: %v): HTTP %d %s", e.name, toFill, r.status, r.body))
		case ukey == "auto_custom_code_run" && r.status == 200:
			// The code defaults are an exact match: a right answer must
			// score 1 (a signature of another version would see no
			// expected answer and score 0).
			outs := r.json(t)["data"].(map[string]any)["outputs"].(map[string]any)
			if outs["score"] != 1.0 || outs["success"] != true {
				failed = append(failed, fmt.Sprintf("%s: a right answer scored %v", e.name, outs))
			}
		default:
			t.Logf("%s: HTTP %d %s", e.name, r.status, r.body)
		}
	}
	t.Logf("%d catalog entries run in %s", len(entries), time.Since(start).Round(time.Millisecond))
	assert.Empty(t, failed, "catalog entries that fail on their own defaults")
}
