package httpapi_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAnalytics(t *testing.T) {
	s := newStack(t)
	seed(t, s)
	post := func(path string, body any) map[string]any {
		t.Helper()
		r := s.doJSON(t, "POST", path, body)
		require.Equal(t, 200, r.status, string(r.body))
		return r.json(t)
	}
	metric := func(body map[string]any, path string) map[string]any {
		t.Helper()
		require.Equal(t, 1.0, body["count"], "one bucket")
		return body["buckets"].([]any)[0].(map[string]any)["metrics"].(map[string]any)[path].(map[string]any)
	}

	t.Run("default specs over root spans", func(t *testing.T) {
		body := post("/api/tracing/analytics/query", map[string]any{})
		assert.Len(t, body["specs"], 6)
		tokens := metric(body, "attributes.ag.metrics.tokens.cumulative.total")
		assert.Equal(t, 1.0, tokens["count"], "only trace A's root has tokens")
		assert.Equal(t, 15.0, tokens["sum"])
		assert.Equal(t, 15.0, tokens["pcts"].(map[string]any)["p50.00"])
		types := metric(body, "attributes.ag.type.trace")
		assert.Equal(t, 2.0, types["count"], "two roots; the three child spans are not counted")
		assert.ElementsMatch(t, []any{
			map[string]any{"value": "invocation", "count": 1.0, "density": 0.5},
			map[string]any{"value": "annotation", "count": 1.0, "density": 0.5},
		}, types["freq"])
	})
	t.Run("specs, filter and interval", func(t *testing.T) {
		now := time.Now().UTC()
		body := post("/api/spans/analytics/query", map[string]any{
			"oldest": now.Add(-time.Hour).Format(time.RFC3339), "newest": now.Add(time.Hour).Format(time.RFC3339), "interval": 1,
			"filter": map[string]any{"conditions": []any{map[string]any{"field": "trace_type", "value": "invocation"}}},
			"specs": []any{
				map[string]any{"type": "categorical/multiple", "path": "attributes.ag.meta.tags"},
				map[string]any{"type": "numeric/discrete", "path": "attributes.ag.metrics.tokens.cumulative.prompt"},
				map[string]any{"type": "string", "path": "span_name"},
			}})
		assert.Equal(t, 1.0, body["query"].(map[string]any)["interval"])
		buckets := body["buckets"].([]any)
		require.NotEmpty(t, buckets)
		var tags, prompt map[string]any
		names := 0.0
		for _, b := range buckets {
			m := b.(map[string]any)["metrics"].(map[string]any)
			assert.Equal(t, 1.0, b.(map[string]any)["interval"])
			names += m["span_name"].(map[string]any)["count"].(float64)
			if m["attributes.ag.meta.tags"].(map[string]any)["count"] == 1.0 {
				tags, prompt = m["attributes.ag.meta.tags"].(map[string]any), m["attributes.ag.metrics.tokens.cumulative.prompt"].(map[string]any)
			}
		}
		assert.Equal(t, 1.0, names, "the filter keeps only the invocation root")
		require.NotNil(t, tags)
		assert.Equal(t, 2.0, tags["uniq"])
		assert.Equal(t, []any{map[string]any{"value": 10.0, "count": 1.0, "density": 1.0}}, prompt["freq"])
	})
	t.Run("legacy buckets", func(t *testing.T) {
		body := post("/api/tracing/spans/analytics", map[string]any{})
		require.Equal(t, 1.0, body["count"])
		b := body["buckets"].([]any)[0].(map[string]any)
		assert.Equal(t, 2.0, b["total"].(map[string]any)["count"])
		assert.Equal(t, 15.0, b["total"].(map[string]any)["tokens"])
		assert.Equal(t, 0.0, b["errors"].(map[string]any)["count"], "an error status without an exception event is not an error")
		body = post("/api/tracing/spans/analytics", map[string]any{"focus": "span"})
		assert.Equal(t, 5.0, body["buckets"].([]any)[0].(map[string]any)["total"].(map[string]any)["count"])
	})
	t.Run("the scope's project_id in the query string is not a query key", func(t *testing.T) {
		for _, path := range []string{"/api/tracing/analytics/query", "/api/tracing/spans/analytics", "/api/tracing/spans/query"} {
			r := s.doJSON(t, "POST", path+"?project_id="+s.project.String(), map[string]any{})
			assert.Equal(t, 200, r.status, "%s: %s", path, r.body)
		}
		r := s.doJSON(t, "POST", "/api/tracing/analytics/query?project_id="+s.project.String()+"&bogus=1", map[string]any{})
		assert.Equal(t, 400, r.status, "other unknown keys are still refused: %s", r.body)
	})
	t.Run("bad input is 400", func(t *testing.T) {
		for _, body := range []map[string]any{
			{"specs": []any{map[string]any{"type": "numeric", "path": "attributes.x"}}},
			{"specs": []any{map[string]any{"type": "string", "path": "nope"}}},
			{"interval": "often"},
			{"bogus": 1},
			{"filter": map[string]any{"conditions": []any{map[string]any{"field": "span_name", "operator": "has", "value": "x"}}}},
		} {
			r := s.doJSON(t, "POST", "/api/tracing/analytics/query", body)
			assert.Equal(t, 400, r.status, "%v: %s", body, r.body)
		}
	})
}
