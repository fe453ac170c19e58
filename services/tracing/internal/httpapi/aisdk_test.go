package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// otlpValue is v as an OTLP/JSON AnyValue.
func otlpValue(v any) map[string]any {
	switch t := v.(type) {
	case string:
		return map[string]any{"stringValue": t}
	case bool:
		return map[string]any{"boolValue": t}
	case float64:
		if t == float64(int64(t)) {
			return map[string]any{"intValue": strconv.FormatInt(int64(t), 10)}
		}
		return map[string]any{"doubleValue": t}
	case []any:
		vals := make([]any, len(t))
		for i, e := range t {
			vals[i] = otlpValue(e)
		}
		return map[string]any{"arrayValue": map[string]any{"values": vals}}
	}
	panic(fmt.Sprintf("no OTLP value for %T", v))
}

// End to end: a real AI SDK trace (generateText with a tool
// step) sent as OTLP/JSON reads back with chat model calls that carry costs,
// and a root whose cumulative tokens count each model call once.
func TestVercelAITraceOverOTLP(t *testing.T) {
	s := newStack(t)
	b, err := os.ReadFile("../../../../pkg/spanmodel/testdata/golden/traces/vercel_ai_tool_step.json")
	require.NoError(t, err)
	var g struct {
		Spans []struct {
			SpanID     string         `json:"span_id"`
			ParentID   string         `json:"parent_id"`
			Name       string         `json:"name"`
			StartUS    int64          `json:"start_us"`
			EndUS      int64          `json:"end_us"`
			Attributes map[string]any `json:"attributes"`
		} `json:"spans"`
	}
	require.NoError(t, json.Unmarshal(b, &g))
	const tid = "aaaaaaaaaaaaaaaaaaaaaaaaaaaa0007"
	base := time.Now().Add(-time.Minute).UnixNano()
	var spans []any
	for _, sp := range g.Spans {
		var attrs []any
		for k, v := range sp.Attributes {
			attrs = append(attrs, map[string]any{"key": k, "value": otlpValue(v)})
		}
		m := map[string]any{"traceId": tid, "spanId": sp.SpanID, "name": sp.Name, "kind": 1, "attributes": attrs,
			"startTimeUnixNano": strconv.FormatInt(base+sp.StartUS*1000, 10), "endTimeUnixNano": strconv.FormatInt(base+sp.EndUS*1000, 10)}
		if sp.ParentID != "" {
			m["parentSpanId"] = sp.ParentID
		}
		spans = append(spans, m)
	}
	body, err := json.Marshal(map[string]any{"resourceSpans": []any{map[string]any{"scopeSpans": []any{map[string]any{"spans": spans}}}}})
	require.NoError(t, err)
	r := s.do(t, "POST", "/api/otlp/v1/traces", body, map[string]string{"Content-Type": "application/json"})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.NotContains(t, string(r.body), "rejected", "every span accepted")

	var got []any
	eventually(t, "four spans", func() bool {
		got, _ = s.do(t, "GET", "/api/spans/?trace_id="+tid, nil, nil).json(t)["spans"].([]any)
		return len(got) == 4
	})
	path := func(m any, keys ...string) any {
		for _, k := range keys {
			mm, _ := m.(map[string]any)
			m = mm[k]
		}
		return m
	}
	types := map[string]int{}
	for _, sp := range got {
		typ := path(sp, "span_type").(string)
		types[typ]++
		if typ == "chat" {
			assert.Greater(t, path(sp, "attributes", "ag", "metrics", "costs", "incremental", "total"), 0.0, "a model call is priced")
		}
		if path(sp, "parent_id") == nil {
			assert.Equal(t, map[string]any{"prompt": 75.0, "completion": 14.0, "total": 89.0},
				path(sp, "attributes", "ag", "metrics", "tokens", "cumulative"), "the root counts each model call once")
			assert.Greater(t, path(sp, "attributes", "ag", "metrics", "costs", "cumulative", "total"), 0.0)
		}
	}
	assert.Equal(t, map[string]int{"chat": 2, "tool": 1, "task": 1}, types)
}
