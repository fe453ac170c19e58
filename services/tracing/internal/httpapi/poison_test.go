package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
)

// store writes spans of project straight into the spans table, the way the
// writer does: rows ingest would refuse today can still be on disk (written
// before a limit existed), and readers must cope with them.
func (s *stack) store(t *testing.T, project uuid.UUID, spans ...*spanspb.Span) {
	t.Helper()
	ctx := context.Background()
	conn, err := chx.Open(ctx, chx.Config{URL: s.chURL, DialTimeout: 5 * time.Second})
	require.NoError(t, err)
	defer conn.Close()
	exp := func(string, time.Time) time.Time {
		return time.Now().Add(48 * time.Hour).UTC().Truncate(24 * time.Hour)
	}
	_, err = chspans.Insert(ctx, conn, []*spanspb.SpanBatch{{ProjectId: project.String(), ReceivedUnixNano: time.Now().UnixNano(), Spans: spans}}, exp)
	require.NoError(t, err)
}

// storeRaw writes one root span of project with the given text columns
// (events, links, ...) as they are, bypassing chspans.Insert, which builds
// those columns itself and cannot write what an older release may have.
func (s *stack) storeRaw(t *testing.T, project uuid.UUID, tid, sid string, start time.Time, cols map[string]string) {
	t.Helper()
	ctx := context.Background()
	conn, err := chx.Open(ctx, chx.Config{URL: s.chURL, DialTimeout: 5 * time.Second})
	require.NoError(t, err)
	defer conn.Close()
	names := []string{"project_id", "trace_id", "span_id", "trace_type", "span_type", "span_name", "start_us", "end_us", "created_us", "version", "expires"}
	values := []any{project.String(), tid, sid, "invocation", "task", "root", start.UnixMicro(), start.UnixMicro(), start.UnixMicro(),
		uint64(time.Now().UnixNano()), time.Now().Add(48 * time.Hour).UTC().Truncate(24 * time.Hour)}
	for k, v := range cols {
		names, values = append(names, k), append(values, v)
	}
	b, err := conn.PrepareBatch(ctx, "INSERT INTO spans ("+strings.Join(names, ", ")+")")
	require.NoError(t, err)
	require.NoError(t, b.Append(values...))
	require.NoError(t, b.Send())
}

// nested is JSON nested depth arrays deep around 1.
func nested(depth int) string {
	return strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth)
}

// storedSpan is a root invocation span as the writer stores it.
func storedSpan(tid, sid string, start time.Time, attrs string) *spanspb.Span {
	return &spanspb.Span{
		TraceId: tid, SpanId: sid, TraceType: "invocation", SpanType: "task", SpanKind: "SPAN_KIND_INTERNAL", SpanName: "root",
		StartUnixMicro: start.UnixMicro(), EndUnixMicro: start.Add(time.Millisecond).UnixMicro(), StatusCode: "STATUS_CODE_UNSET",
		AttributesJson: []byte(attrs), AttrKeys: []string{"ag.type.trace"}, AttrValues: []string{"invocation"},
		CreatedUnixMicro: start.UnixMicro(),
	}
}

// TestPoisonSpansDoNotBreakReads: a stored span whose JSON cannot be
// decoded (nested deeper than encoding/json takes, or not JSON at all) is
// returned with the undecodable part left out and described under
// attributes.ag.unsupported.undecodable; no read route answers 500 for the
// project.
func TestPoisonSpansDoNotBreakReads(t *testing.T) {
	s := newStack(t)
	const (
		tidDeep   = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeee01"
		tidBroken = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeee02"
		tidEvents = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeee03"
	)
	start := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	ag := `"ag":{"data":{"inputs":{"q":"hi"},"outputs":"ok"},"type":{"span":"task","trace":"invocation"}}`
	deep := storedSpan(tidDeep, "e000000000000001", start, `{`+ag+`,"deep":`+nested(10_001)+`,"fine":"yes"}`)
	broken := storedSpan(tidBroken, "e000000000000002", start.Add(time.Second), `{"ag":{"data":{"inputs":`)
	s.store(t, s.project, deep, broken)
	s.storeRaw(t, s.project, tidEvents, "e000000000000003", start.Add(2*time.Second), map[string]string{
		"attributes": `{` + ag + `}`,
		"events":     `[{"name":"boom","attributes":{"x":` + nested(10_001) + `}}]`,
		"links":      `[{"trace_id":"` + tidDeep + `","span_id":"e000000000000001"`,
		"refs":       `[{"id":"x"}]`,
	})

	undecodable := func(t *testing.T, span map[string]any) []any {
		t.Helper()
		attrs, _ := span["attributes"].(map[string]any)
		ag, _ := attrs["ag"].(map[string]any)
		un, _ := ag["unsupported"].(map[string]any)
		list, _ := un["undecodable"].([]any)
		require.NotEmpty(t, list, "span %v carries no undecodable mark: %v", span["span_id"], attrs)
		return list
	}
	paths := func(list []any) []string {
		var out []string
		for _, m := range list {
			out = append(out, m.(map[string]any)["path"].(string))
		}
		return out
	}
	byID := func(t *testing.T, spans []any) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, sp := range spans {
			m := sp.(map[string]any)
			out[m["span_id"].(string)] = m
		}
		return out
	}

	t.Run("spans/query", func(t *testing.T) {
		r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		spans := byID(t, r.json(t)["spans"].([]any))
		require.Len(t, spans, 3)

		d := spans["e000000000000001"]
		attrs := d["attributes"].(map[string]any)
		assert.Equal(t, "yes", attrs["fine"], "the decodable members are kept")
		assert.NotContains(t, attrs, "deep")
		assert.Equal(t, map[string]any{"inputs": map[string]any{"q": "hi"}, "outputs": "ok"}, attrs["ag"].(map[string]any)["data"])
		mark := undecodable(t, d)
		require.Len(t, mark, 1)
		m := mark[0].(map[string]any)
		assert.Equal(t, "attributes.deep", m["path"])
		assert.Contains(t, m["reason"], "max depth")
		assert.Equal(t, float64(len(nested(10_001))), m["bytes"])
		assert.True(t, strings.HasPrefix(nested(10_001), m["raw"].(string)))
		assert.Less(t, len(m["raw"].(string)), 2048, "the raw text is cut")

		b := spans["e000000000000002"]
		mark = undecodable(t, b)
		assert.Equal(t, []string{"attributes"}, paths(mark))
		assert.Equal(t, `{"ag":{"data":{"inputs":`, mark[0].(map[string]any)["raw"])

		e := spans["e000000000000003"]
		assert.ElementsMatch(t, []string{"events", "links"}, paths(undecodable(t, e)))
		assert.NotContains(t, e, "events")
		assert.NotContains(t, e, "links")
		assert.Equal(t, []any{map[string]any{"id": "x"}}, e["references"], "a valid part is kept")
		assert.Equal(t, "ok", e["attributes"].(map[string]any)["ag"].(map[string]any)["data"].(map[string]any)["outputs"])
	})
	t.Run("spans/query with a filter", func(t *testing.T) {
		r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{"windowing": map[string]any{"limit": 10},
			"filtering": map[string]any{"conditions": []any{map[string]any{"field": "trace_type", "value": "invocation"}}}})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		assert.Equal(t, 3.0, r.json(t)["count"])
	})
	t.Run("traces/query", func(t *testing.T) {
		r := s.doJSON(t, "POST", "/api/traces/query", map[string]any{})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		assert.Equal(t, 3.0, r.json(t)["count"])
	})
	t.Run("legacy tracing/spans/query", func(t *testing.T) {
		r := s.doJSON(t, "POST", "/api/tracing/spans/query", map[string]any{})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		assert.Len(t, r.json(t)["traces"], 3)
	})
	for _, path := range []string{"/api/simple/traces/query", "/api/invocations/query"} {
		t.Run(path, func(t *testing.T) {
			r := s.doJSON(t, "POST", path, map[string]any{})
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			// The broken span lost its ag.data: it is not a simple trace.
			assert.Equal(t, 2.0, r.json(t)["count"], string(r.body))
		})
	}
	t.Run("annotations/query", func(t *testing.T) {
		r := s.doJSON(t, "POST", "/api/annotations/query", map[string]any{})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		assert.Equal(t, 0.0, r.json(t)["count"])
	})
	for _, tid := range []string{tidDeep, tidBroken, tidEvents} {
		for _, path := range []string{"/api/traces/" + tid, "/api/tracing/traces/" + tid, "/api/spans/?trace_id=" + tid, "/api/simple/traces/" + tid} {
			t.Run("GET "+path, func(t *testing.T) {
				r := s.do(t, "GET", path, nil, nil)
				require.Equal(t, http.StatusOK, r.status, string(r.body))
			})
		}
	}
	t.Run("GET one span", func(t *testing.T) {
		r := s.do(t, "GET", "/api/spans/"+tidDeep+"/e000000000000001", nil, nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		assert.Equal(t, []string{"attributes.deep"}, paths(undecodable(t, r.json(t)["span"].(map[string]any))))
	})
	t.Run("another project is untouched", func(t *testing.T) {
		other := *s
		other.project = uuid.New()
		r := other.doJSON(t, "POST", "/api/spans/query", map[string]any{})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		assert.Equal(t, 0.0, r.json(t)["count"])
	})
	t.Run("DELETE", func(t *testing.T) {
		for _, tid := range []string{tidDeep, tidBroken} {
			r := s.do(t, "DELETE", "/api/traces/"+tid, nil, nil)
			require.Equal(t, http.StatusAccepted, r.status, string(r.body))
			assert.Equal(t, 1.0, r.json(t)["count"])
		}
		r := s.do(t, "DELETE", "/api/simple/traces/"+tidEvents, nil, nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		assert.Equal(t, 1.0, r.json(t)["count"])
		eventually(t, "poison spans deleted", func() bool {
			return s.doJSON(t, "POST", "/api/spans/query", map[string]any{}).json(t)["count"] == 0.0
		})
	})
}
