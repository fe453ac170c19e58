package evalmetrics_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/testutil/chtest"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/pkg/testutil/svctest"
	"github.com/assayhq/assay/pkg/testutil/writertest"
	"github.com/assayhq/assay/services/runtime/internal/evalmetrics"
	"github.com/assayhq/assay/services/runtime/internal/tracingclient"
)

const token = "evalmetrics-test-token"

// tracing is the real tracing binary over real NATS and ClickHouse, with
// the real writer storing what it ingests.
type tracing struct {
	url string
	sc  scope.Scope
}

func startTracing(t *testing.T) *tracing {
	t.Helper()
	nats := natstest.New(t)
	ch := chtest.NewURL(t)
	writertest.Start(t, nats.URL(), ch)
	tr := svctest.Start(t, svctest.Options{Pkg: "services/tracing/cmd/tracing", AddrVar: "TRACING_ADDR",
		Env: []string{"TRACING_TOKEN_FROM_RUNTIME=" + token, "TRACING_TOKEN_TO_REGISTRY=no-registry-here-0123456789", "TRACING_NATS_URL=" + nats.URL(), "TRACING_CLICKHOUSE_URL=" + ch,
			"TRACING_OTLP_HTTP_ADDR=", "TRACING_OTLP_GRPC_ADDR=", "TRACING_LOG_LEVEL=warn"}})
	return &tracing{url: tr.URL, sc: scope.Scope{ProjectID: uuid.New(), UserID: uuid.New()}}
}

// ingest sends native spans to the tracing service; the writer stores
// them a moment later.
func (tr *tracing) ingest(t *testing.T, spans ...map[string]any) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"spans": spans})
	require.NoError(t, err)
	req, err := http.NewRequest("POST", tr.url+"/tracing/spans/ingest", bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	scope.Set(req.Header, token, tr.sc)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
}

func traceID(n int) string { return fmt.Sprintf("%032x", 0xe7a1000+n) }
func spanID(n int) string  { return fmt.Sprintf("%016x", 0x5ba1000+n) }

// root is a root span of ms milliseconds with outputs (none when nil).
func root(trace string, id int, start time.Time, ms int, outputs any) map[string]any {
	s := map[string]any{"trace_id": trace, "span_id": spanID(id), "span_name": "workflow",
		"start_time": start.Format(time.RFC3339Nano), "end_time": start.Add(time.Duration(ms) * time.Millisecond).Format(time.RFC3339Nano)}
	if outputs != nil {
		s["attributes"] = map[string]any{"ag": map[string]any{"type": map[string]any{"span": "workflow"}, "data": map[string]any{"outputs": outputs}}}
	}
	return s
}

var evaluatorSchema = json.RawMessage(`{"type":"object","properties":{
	"score":{"type":"number"},"success":{"type":"boolean"},
	"label":{"type":"string","enum":["good","bad"]},
	"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}},
	"count":{"type":"integer"}}}`)

// TestCompute: a run of four scenarios (testset → application →
// evaluator), the evaluator failing on the fourth, in two time buckets;
// every expected value below is computed by hand.
func TestCompute(t *testing.T) {
	tr := startTracing(t)
	ctx := context.Background()
	base := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	t1, t2 := base.Truncate(time.Minute), base.Truncate(time.Minute).Add(time.Minute)

	scenarios := []string{"s1", "s2", "s3", "s4"}
	evalOutputs := []any{
		map[string]any{"score": 0.5, "success": true, "label": "good", "tags": []any{"a", "b"}, "count": 2},
		map[string]any{"score": 1.0, "success": true, "label": "bad", "tags": []any{"a"}, "count": 3},
		map[string]any{"score": 0.25, "success": false, "label": "good", "tags": []any{}, "count": 2},
		nil, // failed
	}
	var spans []map[string]any
	var cells []evalmetrics.Cell
	for i, s := range scenarios {
		ts := t1
		if i >= 2 {
			ts = t2
		}
		app, eval := traceID(10+i), traceID(20+i)
		// The application: a root with a chat child of 10, 20, 30, 40 tokens.
		spans = append(spans, root(app, 10+i, base, 1000, "answer"),
			map[string]any{"trace_id": app, "span_id": spanID(30 + i), "parent_id": spanID(10 + i), "span_name": "chat",
				"start_time": base.Format(time.RFC3339Nano), "end_time": base.Add(time.Second).Format(time.RFC3339Nano),
				"attributes": map[string]any{"ag": map[string]any{"type": map[string]any{"span": "chat"},
					"metrics": map[string]any{"tokens": map[string]any{"incremental": map[string]any{"prompt": 5 * (i + 1), "completion": 5 * (i + 1), "total": 10 * (i + 1)}}}}}})
		// The evaluator: 100, 200, 300, 400 ms.
		ev := root(eval, 20+i, base, 100*(i+1), evalOutputs[i])
		if evalOutputs[i] == nil {
			ev["events"] = []any{map[string]any{"name": "exception", "timestamp": base.Format(time.RFC3339Nano),
				"attributes": map[string]any{"message": "webhook answered 500", "type": "EvaluatorError"}}}
		}
		spans = append(spans, ev)
		cells = append(cells,
			evalmetrics.Cell{ScenarioID: s, StepKey: "testset-x", Timestamp: &ts}, // an input cell: skipped
			evalmetrics.Cell{ScenarioID: s, StepKey: "application-x", TraceID: app, Timestamp: &ts},
			evalmetrics.Cell{ScenarioID: s, StepKey: "evaluator-a", TraceID: eval, Timestamp: &ts})
	}
	steps := []evalmetrics.Step{
		{Key: "testset-x", Type: "input", Origin: "custom"},
		{Key: "application-x", Type: "invocation", Origin: "auto"},
		{Key: "evaluator-a", Type: "annotation", Origin: "auto", Outputs: evaluatorSchema},
	}
	c := &evalmetrics.Computer{Tracing: tracingclient.New(tr.url, token, 10*time.Second), Wait: 30 * time.Second, Poll: 100 * time.Millisecond}
	// Ingested just before computing: Compute waits for the writer.
	tr.ingest(t, spans...)
	res, err := c.Compute(ctx, tr.sc, steps, cells, evalmetrics.AllLevels)
	require.NoError(t, err)

	stat := func(d evalmetrics.Data, step, path string) map[string]any {
		t.Helper()
		require.Contains(t, d, step)
		require.Contains(t, d[step], path)
		return d[step][path].(map[string]any)
	}
	const out = "attributes.ag.data.outputs"
	t.Run("global", func(t *testing.T) {
		g := res.Global
		assert.NotContains(t, g, "testset-x", "input steps have no metrics")
		score := stat(g, "evaluator-a", out+".score")
		assert.Equal(t, 4.0, score["count"], "three scores and the failure's 0")
		assert.Equal(t, 1.75, score["sum"])
		assert.Equal(t, 0.4375, score["mean"])
		assert.Equal(t, 0.0, score["min"])
		assert.Equal(t, 1.0, score["max"])
		assert.Equal(t, 0.375, score["pcts"].(map[string]any)["p50.00"], "sorted 0, 0.25, 0.5, 1: halfway between 0.25 and 0.5")
		success := stat(g, "evaluator-a", out+".success")
		assert.Equal(t, 4.0, success["count"])
		assert.ElementsMatch(t, []any{
			map[string]any{"value": true, "count": 2.0, "density": 0.5},
			map[string]any{"value": false, "count": 2.0, "density": 0.5}, // s3, and the failure
		}, success["freq"])
		label := stat(g, "evaluator-a", out+".label")
		assert.Equal(t, 3.0, label["count"], "a failure has no label")
		assert.Equal(t, []any{
			map[string]any{"value": "good", "count": 2.0, "density": 2.0 / 3},
			map[string]any{"value": "bad", "count": 1.0, "density": 1.0 / 3},
		}, label["freq"])
		tags := stat(g, "evaluator-a", out+".tags")
		assert.Equal(t, 2.0, tags["count"], "s3's empty list does not count")
		assert.Equal(t, []any{
			map[string]any{"value": "a", "count": 2.0, "density": 2.0 / 3},
			map[string]any{"value": "b", "count": 1.0, "density": 1.0 / 3},
		}, tags["freq"])
		count := stat(g, "evaluator-a", out+".count")
		assert.Equal(t, 4.0, count["count"], "2, 3, 2 and the failure's 0")
		assert.Equal(t, 7.0, count["sum"])
		assert.Equal(t, 3.0, count["uniq"])
		duration := stat(g, "evaluator-a", "attributes.ag.metrics.duration.cumulative")
		assert.Equal(t, 1000.0, duration["sum"], "100 + 200 + 300 + 400 ms")
		assert.Equal(t, 250.0, duration["mean"])
		errors := stat(g, "evaluator-a", "attributes.ag.metrics.errors.cumulative")
		assert.Equal(t, 1.0, errors["count"])
		assert.Equal(t, 1.0, errors["sum"])

		tokens := stat(g, "application-x", "attributes.ag.metrics.tokens.cumulative.total")
		assert.Equal(t, 4.0, tokens["count"])
		assert.Equal(t, 100.0, tokens["sum"], "10 + 20 + 30 + 40, rolled up from the chat spans")
		assert.Equal(t, 25.0, tokens["pcts"].(map[string]any)["p50.00"])
		assert.Len(t, g["application-x"], 4, "an application step without a schema: the four defaults")
	})
	t.Run("per scenario", func(t *testing.T) {
		require.Len(t, res.Scenarios, 4)
		s1 := stat(res.Scenarios["s1"], "evaluator-a", out+".score")
		assert.Equal(t, 1.0, s1["count"])
		assert.Equal(t, 0.5, s1["sum"])
		s4 := stat(res.Scenarios["s4"], "evaluator-a", out+".score")
		assert.Equal(t, 1.0, s4["count"], "the failed evaluator scores 0")
		assert.Equal(t, 0.0, s4["sum"])
		assert.Equal(t, 40.0, stat(res.Scenarios["s4"], "application-x", "attributes.ag.metrics.tokens.cumulative.total")["sum"])
	})
	t.Run("per time bucket", func(t *testing.T) {
		require.Len(t, res.Temporal, 2)
		first := stat(res.Temporal[t1], "evaluator-a", out+".score")
		assert.Equal(t, 2.0, first["count"])
		assert.Equal(t, 0.75, first["mean"], "s1 and s2: (0.5 + 1) / 2")
		second := stat(res.Temporal[t2], "evaluator-a", out+".score")
		assert.Equal(t, 0.125, second["mean"], "s3 and s4: (0.25 + 0) / 2")
	})
	t.Run("levels", func(t *testing.T) {
		only, err := c.Compute(ctx, tr.sc, steps, cells, evalmetrics.PerScenario)
		require.NoError(t, err)
		assert.Nil(t, only.Global)
		assert.Nil(t, only.Temporal)
		assert.Len(t, only.Scenarios, 4)
	})

	t.Run("scenario and time groups spread over reads", func(t *testing.T) {
		counted := &countReads{Analytics: c.Tracing}
		small := &evalmetrics.Computer{Tracing: counted, MaxTraces: 3}
		spread, err := small.Compute(ctx, tr.sc, steps, cells, evalmetrics.PerScenario|evalmetrics.PerTimestamp)
		require.NoError(t, err)
		// Per step: s1-s3 | s4 and the first bucket (s1, s2) | the second
		// bucket (s3, s4): three reads of at most three traces.
		assert.Equal(t, 6, counted.reads, "two steps, three reads each")
		assert.Equal(t, 6, counted.probes, "the traces are stored: one probe per read, none repeated")
		assert.LessOrEqual(t, counted.most, 3)
		assert.Equal(t, res.Scenarios, spread.Scenarios, "four scenarios of one trace each, three per read")
		assert.Equal(t, res.Temporal, spread.Temporal, "two buckets of two traces, one per read")
		_, err = small.Compute(ctx, tr.sc, steps, cells, evalmetrics.Global)
		assert.ErrorIs(t, err, evalmetrics.ErrTooManyTraces, "the run's four traces are one group")
	})

	t.Run("earlier runs' traces are read without a probe", func(t *testing.T) {
		earlier := make([]evalmetrics.Cell, len(cells))
		for i, cell := range cells {
			cell.Earlier = true
			earlier[i] = cell
		}
		counted := &countReads{Analytics: c.Tracing}
		got, err := (&evalmetrics.Computer{Tracing: counted}).Compute(ctx, tr.sc, steps, earlier, evalmetrics.AllLevels)
		require.NoError(t, err)
		assert.Equal(t, res, got)
		assert.Zero(t, counted.probes, "stored traces: read at once")
		assert.Equal(t, 2, counted.reads, "one read per step")

		// One of them not stored (yet): the short read is done again
		// after the wait, which names it when it never comes.
		lost := evalmetrics.Cell{ScenarioID: "s5", StepKey: "evaluator-a", TraceID: traceID(99), Earlier: true}
		counted = &countReads{Analytics: c.Tracing}
		_, err = (&evalmetrics.Computer{Tracing: counted, Wait: 500 * time.Millisecond, Poll: 100 * time.Millisecond}).
			Compute(ctx, tr.sc, steps, append(earlier, lost), evalmetrics.AllLevels)
		var missing *evalmetrics.MissingError
		require.True(t, errors.As(err, &missing), "%v", err)
		assert.Equal(t, []evalmetrics.Cell{lost}, missing.Cells)
		assert.NotZero(t, counted.probes, "a short read falls back to waiting")
	})

	t.Run("a trace that never arrives is named", func(t *testing.T) {
		short := &evalmetrics.Computer{Tracing: c.Tracing, Wait: 500 * time.Millisecond, Poll: 100 * time.Millisecond}
		lost := evalmetrics.Cell{ScenarioID: "s5", StepKey: "evaluator-a", TraceID: traceID(99)}
		_, err := short.Compute(ctx, tr.sc, steps, append(cells, lost), evalmetrics.AllLevels)
		var missing *evalmetrics.MissingError
		require.True(t, errors.As(err, &missing), "%v", err)
		assert.Equal(t, []evalmetrics.Cell{lost}, missing.Cells)
		assert.Contains(t, err.Error(), traceID(99))
	})

	t.Run("infer a schema from the traces", func(t *testing.T) {
		c := &evalmetrics.Computer{Tracing: c.Tracing, Spans: tracingclient.New(tr.url, token, 10*time.Second)}
		step := evalmetrics.Step{Key: "evaluator-a", Type: "annotation", Origin: "auto"}
		raw, err := c.Infer(ctx, tr.sc, step, cells)
		require.NoError(t, err)
		var schema map[string]any
		require.NoError(t, json.Unmarshal(raw, &schema))
		assert.Equal(t, map[string]any{"type": "object", "required": []any{"count", "label", "score", "success", "tags"},
			"properties": map[string]any{
				"score":   map[string]any{"type": "number"}, // 1.0 reads as an integer, 0.5 makes it a number
				"success": map[string]any{"type": "boolean"},
				"label":   map[string]any{"type": "string"},
				"tags":    map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
				"count":   map[string]any{"type": "integer"},
			}}, schema, "the failure's missing outputs add nothing")
		step.Outputs = raw
		res, err := c.Compute(ctx, tr.sc, []evalmetrics.Step{step}, cells, evalmetrics.Global)
		require.NoError(t, err)
		assert.Equal(t, 1.75, stat(res.Global, "evaluator-a", out+".score")["sum"])
		assert.Equal(t, 3.0, stat(res.Global, "evaluator-a", out+".label")["count"], "a string leaf now")
	})
}

// countReads counts the grouped reads, apart from the readiness probes
// (one spec, the span name), and their largest trace count. Compute
// reads steps side by side: the counts are under mu.
type countReads struct {
	evalmetrics.Analytics
	mu                  sync.Mutex
	reads, probes, most int
}

func (c *countReads) Groups(ctx context.Context, sc scope.Scope, specs []evalmetrics.Spec, groups map[string][]string) (map[string]evalmetrics.Group, error) {
	c.mu.Lock()
	if len(specs) == 1 && specs[0].Path == "span_name" {
		c.probes++
	} else {
		c.reads++
	}
	distinct := map[string]bool{}
	for _, ids := range groups {
		for _, id := range ids {
			distinct[id] = true
		}
	}
	c.most = max(c.most, len(distinct))
	c.mu.Unlock()
	return c.Analytics.Groups(ctx, sc, specs, groups)
}
