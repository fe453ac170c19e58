package sdkcompat

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLangfuseV4 runs @langfuse/otel + @langfuse/tracing 4.6.1 with the
// SDK's default exporter (its own path under the base URL, Basic
// credentials made of our key's prefix and secret) and reads the trace
// back: types, inputs, outputs, model, tokens counted once, costs computed
// from the tokens unless the SDK gave them, the ERROR-level observation,
// and the trace's user, session and tags.
func TestLangfuseV4(t *testing.T) {
	p, e := platform(t)
	out := sdk{Dir: "langfuse-v4"}.run(t, "trace.mjs", e)
	ids, _ := out["trace_ids"].([]any)
	require.Len(t, ids, 1, "%v", out)
	id := ids[0].(string)
	spans := trace(t, p, e.APIKey, id, 6)
	one := func(name string) map[string]any {
		t.Helper()
		got := byName(spans, name)
		require.Len(t, got, 1, "span %s in %s", name, dump(spans))
		return got[0]
	}
	get := func(s map[string]any, path string) any {
		v, _ := attr(s, path)
		return v
	}
	type usage struct{ prompt, completion, cached float64 }
	var used []usage
	for _, u := range out["usage"].([]any) {
		m := u.(map[string]any)
		used = append(used, usage{m["prompt"].(float64), m["completion"].(float64), m["cached"].(float64)})
	}
	require.Len(t, used, 2)

	root := one("qa-pipeline")
	assert.Equal(t, "task", root["span_type"])
	assert.Equal(t, map[string]any{"question": "What is two plus two?"}, get(root, "ag.data.inputs"))
	assert.Equal(t, map[string]any{"answer": out["answer"]}, get(root, "ag.data.outputs"))
	assert.Equal(t, "user-7", get(root, "ag.user.id"))
	assert.Equal(t, "sess-9", get(root, "ag.session.id"))
	assert.Equal(t, []any{"sdkcompat", "langfuse"}, get(root, "ag.meta.tags"))
	assert.Equal(t, "acme", get(root, "ag.meta.metadata.tenant"))
	assert.Equal(t, "qa-trace", get(root, "ag.meta.trace_name"))
	assert.Equal(t, "sdkcompat", get(root, "ag.meta.environment"))
	assert.Equal(t, "r-1", get(root, "ag.meta.release"))

	chat1 := one("chat-1")
	assert.Equal(t, "chat", chat1["span_type"])
	assert.Equal(t, "gpt-4o-mini", get(chat1, "ag.meta.request.model"))
	assert.EqualValues(t, 0, get(chat1, "ag.meta.request.temperature"))
	assert.EqualValues(t, 50, get(chat1, "ag.meta.request.max_tokens"))
	prompt, _ := get(chat1, "ag.data.inputs.prompt").([]any)
	require.Len(t, prompt, 2, dump(spans))
	assert.Equal(t, map[string]any{"role": "user", "content": "What is two plus two?"}, prompt[1])
	completion, _ := get(chat1, "ag.data.outputs.completion").([]any)
	require.Len(t, completion, 1, dump(spans))
	assert.Equal(t, out["answer"], completion[0].(map[string]any)["content"])
	assert.NotEmpty(t, get(chat1, "ag.meta.completion_start_time"))
	u1 := used[0]
	// The cached bucket is added back to the input side and also counted
	// as cache reads, priced at the cached rate.
	assert.Equal(t, map[string]any{"prompt": u1.prompt, "completion": u1.completion, "total": u1.prompt + u1.completion, "cache_read": u1.cached},
		get(chat1, "ag.metrics.tokens.incremental"))
	cost1 := miniCost(u1.prompt, u1.cached, u1.completion)
	require.Greater(t, cost1, 0.0)
	assert.InDelta(t, cost1, get(chat1, "ag.metrics.costs.incremental.total"), 1e-12)

	chat2 := one("chat-2")
	assert.Equal(t, "chat", chat2["span_type"])
	u2 := used[1]
	assert.Equal(t, map[string]any{"prompt": u2.prompt, "completion": u2.completion, "total": u2.prompt + u2.completion},
		get(chat2, "ag.metrics.tokens.incremental"))
	// The SDK's cost_details win over the price table.
	assert.Equal(t, map[string]any{"prompt": 0.01, "completion": 0.02, "total": 0.03}, get(chat2, "ag.metrics.costs.incremental"))

	tool := one("calculator")
	assert.Equal(t, "tool", tool["span_type"])
	assert.Equal(t, "2+2", get(tool, "ag.data.inputs.expression"))
	// Media are not stored: the SDK's upload is refused, harmlessly, and
	// the span keeps its reference in place of the data.
	assert.True(t, strings.HasPrefix(get(tool, "ag.data.inputs.image").(string), "@@@langfuseMedia:"), dump(spans))
	assert.Equal(t, map[string]any{"result": 4.0}, get(tool, "ag.data.outputs"))

	event := one("user-feedback")
	assert.Equal(t, "task", event["span_type"])
	assert.Equal(t, map[string]any{"__default__": "thumbs up"}, get(event, "ag.data.inputs"))

	failed := one("fetch-docs")
	assert.Equal(t, "query", failed["span_type"])
	assert.Equal(t, "STATUS_CODE_ERROR", failed["status_code"])
	assert.Equal(t, "index unavailable", get(failed, "ag.exception.message"))

	// Counted once at the root: the sum of the two model calls, and the
	// cost the sum of the computed and the given ones.
	assert.Equal(t, map[string]any{"prompt": u1.prompt + u2.prompt, "completion": u1.completion + u2.completion,
		"total": u1.prompt + u1.completion + u2.prompt + u2.completion}, get(root, "ag.metrics.tokens.cumulative"))
	assert.InDelta(t, cost1+0.03, get(root, "ag.metrics.costs.cumulative.total"), 1e-12)
	assert.EqualValues(t, 1, get(root, "ag.metrics.errors.cumulative"))

	// What the SDK's other calls get through the whole platform: the
	// readiness probe on its path, and the media upload refused with a
	// 404 that says why (a 5xx the SDK would retry).
	prefix, secret, _ := strings.Cut(e.APIKey, ".")
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(prefix+":"+secret))
	status, body := p.Do(t, "GET", "/api/public/otel/v1/traces", basic, nil)
	assert.Equal(t, 200, status, "%s", body)
	status, body = p.Do(t, "POST", "/api/public/media", basic, map[string]any{"contentType": "image/png", "contentLength": 68})
	assert.Equal(t, 404, status, "%s", body)
	var refused struct {
		Detail struct{ Message string } `json:"detail"`
	}
	require.NoError(t, json.Unmarshal(body, &refused), "%s", body)
	assert.Contains(t, refused.Detail.Message, "media upload is not supported")
	status, _ = p.Do(t, "POST", "/api/public/otel/v1/traces", "Basic "+base64.StdEncoding.EncodeToString([]byte(prefix+":wrong")), map[string]any{})
	assert.Equal(t, 401, status)
}
