package httpapi

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/apidoc"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
	"github.com/assayhq/assay/services/tracing/internal/query"
)

// The handlers below read bodies as JSON maps (spans come in many shapes)
// and render spans through query.SpanJSON, so these named types describe
// the documented shapes; the bodies the handlers bind and render as
// structs (ingestResponse, queryBody, simpleIn, ingest.Link) are used as they are.
type (
	docSpanInput struct {
		TraceID       string         `json:"trace_id" apidoc:"required" doc:"32 hex digits." example:"5b8efff798038103d269b633813fc60c"`
		SpanID        string         `json:"span_id" apidoc:"required" doc:"16 hex digits." example:"eee19b7ec3c1b174"`
		ParentID      string         `json:"parent_id,omitempty"`
		SpanName      string         `json:"span_name,omitempty" example:"chat"`
		SpanKind      string         `json:"span_kind,omitempty" example:"SPAN_KIND_CLIENT"`
		StartTime     time.Time      `json:"start_time" doc:"RFC 3339, or epoch digits."`
		EndTime       time.Time      `json:"end_time"`
		StatusCode    string         `json:"status_code,omitempty" example:"STATUS_CODE_OK"`
		StatusMessage string         `json:"status_message,omitempty"`
		Attributes    map[string]any `json:"attributes,omitempty" doc:"Flat (dotted keys) or nested; ag.* holds the platform's own." example:"{\"ag\": {\"data\": {\"inputs\": {\"q\": \"hi\"}, \"outputs\": \"hello\"}}}"`
		Events        []docSpanEvent `json:"events,omitempty"`
		Links         []ingest.Link  `json:"links,omitempty"`
		References    []docReference `json:"references,omitempty"`
	}
	docSpanEvent struct {
		Name       string         `json:"name"`
		Timestamp  time.Time      `json:"timestamp"`
		Attributes map[string]any `json:"attributes,omitempty"`
	}
	docReference struct {
		ID         string         `json:"id,omitempty"`
		Slug       string         `json:"slug,omitempty"`
		Version    string         `json:"version,omitempty"`
		Attributes map[string]any `json:"attributes,omitempty" doc:"attributes.key names the role: application, evaluator, testcase, ..."`
	}
	docSpanOutput struct {
		docSpanInput
		TraceType   string         `json:"trace_type" example:"invocation"`
		SpanType    string         `json:"span_type" example:"chat"`
		CreatedAt   time.Time      `json:"created_at"`
		CreatedByID string         `json:"created_by_id,omitempty"`
		SessionID   string         `json:"session_id,omitempty"`
		UserID      string         `json:"user_id,omitempty"`
		AgentID     string         `json:"agent_id,omitempty"`
		Hashes      []any          `json:"hashes,omitempty"`
		Extra       map[string]any `json:"-"`
	}
	docTraceOutput struct {
		TraceID string         `json:"trace_id"`
		Spans   map[string]any `json:"spans" doc:"The trace's root spans keyed by name (a list when names repeat); each span holds its children the same way under spans."`
	}
	// docTraceTree is one trace of the focus=trace answers: its root spans
	// by name, without a trace_id (the key it sits under).
	docTraceTree struct {
		Spans map[string]any `json:"spans" doc:"The trace's root spans keyed by name (a list when names repeat); each span holds its children the same way under spans."`
	}
	docSpansIngest struct {
		Spans  []docSpanInput               `json:"spans,omitempty" doc:"The flat form."`
		Traces map[string]docNestedTraceSet `json:"traces,omitempty" doc:"The nested form, keyed by trace id."`
	}
	docNestedTraceSet struct {
		Spans map[string]docSpanInput `json:"spans" doc:"Spans keyed by name; a span's own spans nest the same way."`
	}
	docTracesIngest struct {
		Traces []docTraceInput `json:"traces" apidoc:"required"`
	}
	docTraceInput struct {
		TraceID string                  `json:"trace_id"`
		Spans   map[string]docSpanInput `json:"spans" doc:"Spans keyed by name; trace_id comes from the trace."`
	}
	docTracesIngested struct {
		Count    int               `json:"count"`
		TraceIDs []string          `json:"trace_ids"`
		Rejected []rejectedSpanOut `json:"rejected,omitempty"`
	}
	docSpanList struct {
		Count     int                 `json:"count"`
		Spans     []docSpanOutput     `json:"spans"`
		Windowing *query.RawWindowing `json:"windowing,omitempty" doc:"Present when more pages follow: resend it."`
	}
	docOneSpan struct {
		Count int            `json:"count" doc:"0 when nothing matched, then span is absent."`
		Span  *docSpanOutput `json:"span,omitempty"`
	}
	docTraceList struct {
		Count     int                 `json:"count"`
		Traces    []docTraceOutput    `json:"traces"`
		Windowing *query.RawWindowing `json:"windowing,omitempty"`
	}
	docOneTrace struct {
		Count int             `json:"count"`
		Trace *docTraceOutput `json:"trace,omitempty"`
	}
	docTraceTrees struct {
		Count  int                     `json:"count"`
		Traces map[string]docTraceTree `json:"traces,omitempty" doc:"Keyed by trace id; each holds its root spans by name."`
	}
	docTraceWritten struct {
		Count   int    `json:"count"`
		TraceID string `json:"trace_id,omitempty"`
	}
	docDistinctQuery struct {
		Realtime  bool                `json:"realtime"`
		Windowing *query.RawWindowing `json:"windowing"`
		Filtering map[string]any      `json:"filtering,omitempty" doc:"Ours (the compatible query has none): only the spans matching this filtering tree, as in /spans/query, count; without it every span does. Cumulative metrics are refused (400)."`
	}
	docSessionIDs struct {
		Count      int                 `json:"count"`
		SessionIDs []string            `json:"session_ids"`
		Windowing  *query.RawWindowing `json:"windowing,omitempty"`
	}
	docUserIDs struct {
		Count     int                 `json:"count"`
		UserIDs   []string            `json:"user_ids"`
		Windowing *query.RawWindowing `json:"windowing,omitempty"`
	}
	docSimpleOutput struct {
		simpleIn
		TraceID string `json:"trace_id"`
		SpanID  string `json:"span_id"`
	}
	docOtlpStatus struct {
		Status string `json:"status" example:"ready"`
	}
)

// docAnalyticsRequest (not …Query: ogen names Analytics.query so) is the flat analytics body (analyticsKeys); the
// filtering and windowing objects of the new style are taken too.
type docAnalyticsRequest struct {
	Oldest    *time.Time          `json:"oldest,omitempty"`
	Newest    *time.Time          `json:"newest,omitempty"`
	Interval  *int                `json:"interval,omitempty" doc:"Bucket width in minutes; 0 is one bucket over the window."`
	Rate      *float64            `json:"rate,omitempty" doc:"Sampling rate, 0 to 1."`
	Filter    any                 `json:"filter,omitempty" doc:"A filtering object, or the same as a JSON string."`
	Filtering map[string]any      `json:"filtering,omitempty"`
	Windowing *query.RawWindowing `json:"windowing,omitempty"`
	Specs     []query.MetricSpec  `json:"specs,omitempty" doc:"Metrics to compute per bucket (not on the legacy route)."`
	Focus     string              `json:"focus,omitempty" doc:"Legacy route: trace (default) or span."`
}

type docAnalytics struct {
	Count   int                `json:"count"`
	Buckets []query.Bucket     `json:"buckets"`
	Query   map[string]any     `json:"query,omitempty" doc:"The window used: oldest, newest, interval, filter, rate."`
	Specs   []query.MetricSpec `json:"specs,omitempty"`
}

// docLegacyQuery is /tracing/spans/query's flat body.
type docLegacyQuery struct {
	Focus    string     `json:"focus,omitempty" doc:"trace (default: trees by trace) or span (a flat list)."`
	Format   string     `json:"format,omitempty" doc:"agenta (default) or opentelemetry."`
	Oldest   *time.Time `json:"oldest,omitempty"`
	Newest   *time.Time `json:"newest,omitempty"`
	Limit    *int       `json:"limit,omitempty"`
	Next     string     `json:"next,omitempty"`
	Order    string     `json:"order,omitempty" doc:"ascending or descending."`
	Interval *int       `json:"interval,omitempty"`
	Rate     *float64   `json:"rate,omitempty"`
	Filter   any        `json:"filter,omitempty" doc:"A filtering object, or the same as a JSON string."`
}

type docLegacyResult struct {
	Count  int                     `json:"count"`
	Spans  []docSpanOutput         `json:"spans,omitempty" doc:"focus=span."`
	Traces map[string]docTraceTree `json:"traces,omitempty" doc:"focus=trace: keyed by trace id; each holds its root spans by name."`
}

// simpleQueryBody documents simpleQuery's body: a filter record under the
// item key, links under the family's links key, and windowing.
func simpleQueryBody(item, linksKey string) any {
	return apidoc.Envelope(apidoc.Field{Name: item, Value: simpleIn{}, Doc: "Match on origin, kind, channel, tags, meta, references."},
		apidoc.Field{Name: linksKey, Value: []ingest.Link{}, Doc: "Only these traces."},
		apidoc.Field{Name: "windowing", Value: &query.RawWindowing{}})
}

// the simple families share shapes and differ by envelope key
func simpleBindings(prefix, item, items, linksKey string) []apidoc.Binding {
	return []apidoc.Binding{
		{Method: "POST", Path: prefix, Request: simpleEnvelope(item), Response: simpleEnvelope(item)},
		{Method: "GET", Path: prefix + "/{id}", Response: simpleEnvelope(item)},
		{Method: "PATCH", Path: prefix + "/{id}", Request: simpleEnvelope(item), Response: simpleEnvelope(item)},
		{Method: "DELETE", Path: prefix + "/{id}", Response: docSimpleDeleted{}},
		{Method: "POST", Path: prefix + "/query", Request: simpleQueryBody(item, linksKey), Response: simpleListEnvelope(items)},
	}
}

type (
	docSimpleTrace struct {
		Count int              `json:"count"`
		Trace *docSimpleOutput `json:"trace,omitempty"`
	}
	docSimpleAnnotation struct {
		Count      int              `json:"count"`
		Annotation *docSimpleOutput `json:"annotation,omitempty"`
	}
	docSimpleInvocation struct {
		Count      int              `json:"count"`
		Invocation *docSimpleOutput `json:"invocation,omitempty"`
	}
	docSimpleTraces struct {
		Count  int               `json:"count"`
		Traces []docSimpleOutput `json:"traces"`
	}
	docSimpleAnnotations struct {
		Count       int               `json:"count"`
		Annotations []docSimpleOutput `json:"annotations"`
	}
	docSimpleInvocations struct {
		Count       int               `json:"count"`
		Invocations []docSimpleOutput `json:"invocations"`
	}
	docSimpleDeleted struct {
		Count int          `json:"count"`
		Link  *ingest.Link `json:"link,omitempty"`
	}
)

func simpleEnvelope(item string) any {
	return map[string]any{"trace": docSimpleTrace{}, "annotation": docSimpleAnnotation{}, "invocation": docSimpleInvocation{}}[item]
}

func simpleListEnvelope(items string) any {
	return map[string]any{"traces": docSimpleTraces{}, "annotations": docSimpleAnnotations{}, "invocations": docSimpleInvocations{}}[items]
}

func tracingBindings() []apidoc.Binding {
	b := []apidoc.Binding{
		{Method: "GET", Path: "/api/otlp/v1/traces", Response: docOtlpStatus{}},
		{Method: "POST", Path: "/api/tracing/spans/ingest", Request: docSpansIngest{}, Response: ingestResponse{}},
		{Method: "POST", Path: "/api/spans/ingest", Request: docSpansIngest{}, Response: ingestResponse{}},
		{Method: "POST", Path: "/api/tracing/traces", Request: docSpansIngest{}, Response: ingestResponse{}},
		{Method: "PUT", Path: "/api/tracing/traces/{id}", Request: docSpansIngest{}, Response: ingestResponse{}},
		{Method: "GET", Path: "/api/tracing/traces/{id}", Response: docTraceTrees{}},
		{Method: "DELETE", Path: "/api/tracing/traces/{id}", Response: ingestResponse{}},
		{Method: "POST", Path: "/api/tracing/sessions/query", Request: docDistinctQuery{}, Response: docSessionIDs{}},
		{Method: "POST", Path: "/api/tracing/users/query", Request: docDistinctQuery{}, Response: docUserIDs{}},
		{Method: "POST", Path: "/api/spans/sessions/query", Request: docDistinctQuery{}, Response: docSessionIDs{}},
		{Method: "POST", Path: "/api/spans/users/query", Request: docDistinctQuery{}, Response: docUserIDs{}},
		{Method: "GET", Path: "/api/spans", Response: docSpanList{}},
		{Method: "POST", Path: "/api/spans/query", Request: queryBody{}, Response: docSpanList{}},
		{Method: "GET", Path: "/api/spans/{trace_id}/{span_id}", Response: docOneSpan{}},
		{Method: "GET", Path: "/api/traces", Response: docTraceList{}},
		{Method: "POST", Path: "/api/traces/query", Request: queryBody{}, Response: docTraceList{}},
		{Method: "POST", Path: "/api/traces/ingest", Request: docTracesIngest{}, Response: docTracesIngested{}},
		{Method: "POST", Path: "/api/traces", Request: docTraceInput{}, Response: docTraceWritten{}},
		{Method: "GET", Path: "/api/traces/{id}", Response: docOneTrace{}},
		{Method: "PUT", Path: "/api/traces/{id}", Request: docTraceInput{}, Response: docTraceWritten{}},
		{Method: "DELETE", Path: "/api/traces/{id}", Response: docTraceWritten{}},
	}
	b = append(b, apidoc.Binding{Method: "POST", Path: "/api/tracing/analytics/query", Request: docAnalyticsRequest{}, Response: docAnalytics{}},
		apidoc.Binding{Method: "POST", Path: "/api/spans/analytics/query", Request: docAnalyticsRequest{}, Response: docAnalytics{}},
		apidoc.Binding{Method: "POST", Path: "/api/tracing/spans/analytics", Request: docAnalyticsRequest{}, Response: docAnalytics{}},
		apidoc.Binding{Method: "POST", Path: "/api/tracing/spans/query", Request: docLegacyQuery{}, Response: docLegacyResult{}},
		apidoc.Binding{Method: "POST", Path: "/internal/analytics/groups", Request: groupsBody{}, Response: groupsResponse{}})
	// the families' item, list and links keys, as simpleKinds has them
	for _, k := range simpleKinds {
		b = append(b, simpleBindings("/api"+k.prefix, k.item, k.items, k.linksKey)...)
	}
	return b
}

// TestOpenAPITypes keeps pkg/apidoc/tracing.types.json generated from the
// Go types above and the handlers' own; UPDATE_APIDOC=1 regenerates it.
func TestOpenAPITypes(t *testing.T) {
	require.NoError(t, apidoc.CheckTypes("tracing", tracingBindings(), os.Getenv("UPDATE_APIDOC") == "1"))
}
