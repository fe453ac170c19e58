package spanmodel_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/spanmodel"
)

// goldenTrace is one testdata/golden/traces file: the spans of one trace as
// an instrumentation library exported them (times as offsets from the
// trace's first start), and the canonical spans we store, in the same
// order. testdata/aisdk holds the script that produced the Vercel AI SDK
// ones.
type goldenTrace struct {
	About string `json:"about"`
	Spans []struct {
		SpanID     string         `json:"span_id"`
		ParentID   string         `json:"parent_id"`
		Name       string         `json:"name"`
		Kind       string         `json:"kind"`
		StartUS    int64          `json:"start_us"`
		EndUS      int64          `json:"end_us"`
		Attributes map[string]any `json:"attributes"`
	} `json:"spans"`
	Want []map[string]any `json:"want"`
}

// normalizeTrace runs a golden trace through OTLP normalisation as one
// request, so the roll-up sees the whole tree.
func normalizeTrace(t *testing.T, g goldenTrace) []*spanmodel.Span {
	t.Helper()
	prices, err := spanmodel.LoadPrices("")
	require.NoError(t, err)
	n := &spanmodel.Normalizer{Prices: prices}
	start := time.Date(2025, 1, 5, 10, 0, 0, 0, time.UTC)
	raws := make([]spanmodel.Raw, len(g.Spans))
	for i, s := range g.Spans {
		raws[i] = spanmodel.Raw{TraceID: "0af7651916cd43dd8448eb211c80319c", SpanID: s.SpanID, ParentID: s.ParentID, Name: s.Name,
			Kind: s.Kind, Start: start.Add(time.Duration(s.StartUS) * time.Microsecond),
			End: start.Add(time.Duration(s.EndUS) * time.Microsecond), Attributes: s.Attributes, OTLP: true}
	}
	spans, rejected := n.Batch(raws)
	require.Empty(t, rejected)
	require.Len(t, spans, len(raws))
	return spans
}

func readTrace(t *testing.T, f string) goldenTrace {
	t.Helper()
	b, err := os.ReadFile(f)
	require.NoError(t, err)
	var g goldenTrace
	require.NoError(t, json.Unmarshal(b, &g))
	return g
}

// TestGoldenTraces compares whole normalised traces with their golden want.
func TestGoldenTraces(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/traces/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			g := readTrace(t, f)
			spans := normalizeTrace(t, g)
			got := make([]map[string]any, len(spans))
			for i, s := range spans {
				m := map[string]any{"span_id": s.SpanID, "span_type": s.SpanType, "trace_type": s.TraceType, "attributes": s.Attributes}
				if s.ParentID != "" {
					m["parent_id"] = s.ParentID
				}
				for k, v := range map[string]string{"session_id": s.SessionID, "user_id": s.UserID} {
					if v != "" {
						m[k] = v
					}
				}
				b, err := json.Marshal(m)
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(b, &got[i]))
			}
			if *update {
				g.Want = got
				out, err := json.MarshalIndent(g, "", " ")
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(f, append(out, '\n'), 0o644))
				return
			}
			require.NotNil(t, g.Want, "no want yet: run go test -run TestGoldenTraces -update and review the diff")
			assert.Equal(t, g.Want, got)
		})
	}
}

// On real AI SDK output: the model calls
// (doGenerate, doStream, doEmbed) are chat and embedding spans with their
// tokens and costs; a wrapper span's usage (ai.generateText, ai.streamText,
// ai.embed) already sums its model calls, so the root's cumulative tokens
// are its children's, counted once.
func TestVercelAITracesCountEachModelCallOnce(t *testing.T) {
	for _, c := range []struct {
		file  string
		types map[string]string  // span name → type
		root  [3]float64         // prompt, completion, total
		model map[string]float64 // span name → incremental prompt tokens
	}{
		{"vercel_ai_generate", map[string]string{"ai.generateText": "task", "ai.generateText.doGenerate": "chat"}, [3]float64{75, 14, 89},
			map[string]float64{"ai.generateText.doGenerate": 75}},
		{"vercel_ai_stream", map[string]string{"ai.streamText": "task", "ai.streamText.doStream": "chat"}, [3]float64{40, 6, 46},
			map[string]float64{"ai.streamText.doStream": 40}},
		{"vercel_ai_tool_step", map[string]string{"ai.generateText": "task", "ai.generateText.doGenerate": "chat", "ai.toolCall": "tool"},
			[3]float64{75, 14, 89}, nil},
		{"vercel_ai_embed", map[string]string{"ai.embed": "embedding", "ai.embed.doEmbed": "embedding"}, [3]float64{5, 0, 5},
			map[string]float64{"ai.embed.doEmbed": 5}},
	} {
		t.Run(c.file, func(t *testing.T) {
			spans := normalizeTrace(t, readTrace(t, "testdata/golden/traces/"+c.file+".json"))
			for _, s := range spans {
				assert.Equal(t, c.types[s.SpanName], s.SpanType, s.SpanName)
				ag := s.Attributes["ag"]
				if s.ParentID == "" {
					cum := lookup(ag, "metrics.tokens.cumulative")
					assert.Equal(t, map[string]any{"prompt": c.root[0], "completion": c.root[1], "total": c.root[2]}, cum, "root tokens")
					assert.Nil(t, lookup(ag, "metrics.tokens.incremental"), "a wrapper's usage is its children's, not its own")
					assert.Greater(t, lookup(ag, "metrics.costs.cumulative.total"), 0.0, "root costs")
					assert.Equal(t, "sess-1", s.SessionID)
					continue
				}
				if s.SpanType == "chat" || s.SpanType == "embedding" {
					assert.Greater(t, lookup(ag, "metrics.tokens.incremental.prompt"), 0.0, s.SpanName)
					assert.Greater(t, lookup(ag, "metrics.costs.incremental.total"), 0.0, "%s costs", s.SpanName)
					if s.SpanType == "chat" {
						assert.NotNil(t, lookup(ag, "meta.response.model"), s.SpanName)
					} else {
						assert.NotNil(t, lookup(ag, "meta.request.model"), s.SpanName)
					}
				}
				if want, ok := c.model[s.SpanName]; ok {
					assert.Equal(t, want, lookup(ag, "metrics.tokens.incremental.prompt"), s.SpanName)
				}
				if s.SpanType == "chat" {
					assert.NotNil(t, lookup(ag, "data.inputs.prompt"), "%s messages", s.SpanName)
				}
			}
		})
	}
}
