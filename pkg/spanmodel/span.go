// Package spanmodel is the canonical span (the compatible platform's span
// shape, ag.* namespace included) and how one is
// made: Raw (a span as a client sent it), Span, the id and time parsers, the
// attribute tree (Unflatten, Flatten, LeafText), the limits, and the
// Normalizer that turns spans as clients send them (OTLP or the native JSON
// forms) into canonical ones: ids and times parsed, attributes un-flattened,
// semantic conventions mapped into ag.*, the ag subtree cleaned (what does
// not fit is parked under ag.unsupported), types inferred and metrics
// computed and rolled up (RollUp). How a Span is stored (its ClickHouse row)
// is pkg/chspans' business.
package spanmodel

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Enumerations of the canonical span.
var (
	TraceTypes  = []string{"invocation", "annotation", "unknown"}
	SpanTypes   = []string{"agent", "chain", "workflow", "task", "tool", "embedding", "query", "llm", "completion", "chat", "rerank", "unknown"}
	SpanKinds   = []string{"SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT", "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER"}
	StatusCodes = []string{"STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"}
)

// Raw is a span as a client sent it, before normalisation.
type Raw struct {
	TraceID, SpanID, ParentID string
	Name                      string
	Kind                      string
	Start, End                any // time.Time, epoch digits or ISO text; nil if absent
	StatusCode, StatusMessage string
	Attributes                map[string]any // flat (dotted) or nested
	// OTLP applies the semantic-convention adapters (OpenLLMetry,
	// OpenInference, gen_ai, Vercel AI) to the flat attributes.
	OTLP         bool
	Resource     map[string]any
	ScopeName    string
	ScopeVersion string
	Events       []RawEvent
	Links        []RawLink
	LinksSet     bool // links were given, possibly empty: the trace is an annotation
	References   any  // native: a list of {id, slug, version, attributes:{key}}
	// Strict rejects the span over any limit instead of trimming it: the
	// one span of an annotation or simple trace, whose answer echoes what
	// was sent.
	Strict bool
}

// RawEvent is an OTel span event.
type RawEvent struct {
	Name       string
	Time       any
	Attributes map[string]any
}

// RawLink is an OTel span link.
type RawLink struct {
	TraceID, SpanID string
	Attributes      map[string]any
}

// Span is the canonical span.
type Span struct {
	TraceID, SpanID, ParentID string
	TraceType, SpanType       string
	SpanKind, SpanName        string
	Start, End                time.Time
	StatusCode, StatusMessage string
	SessionID, UserID         string
	AgentID                   string
	Attributes                map[string]any
	Events                    []Event
	Links                     []Link
	LinksSet                  bool
	References                []Reference
	Hashes                    []Hash
	// Index is the span's position among the raw spans of its request.
	Index int

	cut    *Cut // what the limits took (nil: nothing), recorded under ag.unsupported.span_limits
	strict bool
	arena  *Arena // lends the objects the normaliser builds (nil: new ones)
}

// Event is a stored span event.
type Event struct {
	Name       string
	Time       time.Time
	Attributes map[string]any
}

// Link is a stored span link; Key is its attributes.key.
type Link struct {
	TraceID, SpanID, Key string
	Attributes           map[string]any
}

// Reference is an entity reference: Key says which entity of the span it is
// (application, evaluator, …), ID, Slug or Version name it.
type Reference struct{ Key, ID, Slug, Version string }

// Hash is an evaluation-cache hash of a span's references and links.
type Hash struct{ ID, Key string }

// Error is why one span was rejected; its neighbours are unaffected.
type Error struct {
	Index int
	Msg   string
	Limit bool // rejected for a span limit (a one-span route answers 413)
}

func (e Error) Error() string { return fmt.Sprintf("span %d: %s", e.Index, e.Msg) }

// Normalizer normalises spans within its limits; its price table
// computes costs.
type Normalizer struct {
	Prices *Prices
	Limits Limits // zero fields take DefaultLimits; read once, on first use
	Now    func() time.Time

	once sync.Once
	lim  Limits // Limits with the defaults filled in
}

// LimitsInForce are n's limits with the defaults filled in; one copy for
// all spans, so that no span allocates its own. The stored-row encoder
// (chspans.Encode) takes them.
func (n *Normalizer) LimitsInForce() *Limits {
	n.once.Do(func() { n.lim = n.Limits.orDefault() })
	return &n.lim
}

// Batch normalises the spans of one request: each bad span is reported in
// rejected and left out; types and metrics are then derived per trace.
func (n *Normalizer) Batch(raws []Raw) (spans []*Span, rejected []Error) {
	return n.BatchIn(raws, nil)
}

// BatchIn is Batch with the objects it un-flattens lent by a (nil: new
// ones): the spans are the same, and must not be read once a is
// released.
func (n *Normalizer) BatchIn(raws []Raw, a *Arena) (spans []*Span, rejected []Error) {
	lim := n.LimitsInForce()
	// The spans are normalised side by side, each part with its own arena
	// (released with a). What they share is made read-only first: the
	// resource attributes, one map for all the spans of an OTLP resource,
	// are trimmed here, once each.
	res := lim.trimResources(raws)
	type result struct {
		s   *Span
		err error
	}
	out := make([]result, len(raws))
	Split(len(raws), minSplit, func(part, from, to int) {
		pa := a
		if part > 0 {
			pa = a.fork()
		}
		for i := from; i < to; i++ {
			out[i].s, out[i].err = n.span(raws[i], lim, res, pa)
		}
	})
	for i, o := range out {
		if o.err != nil {
			rejected = append(rejected, Error{Index: i, Msg: o.err.Error(), Limit: IsLimit(o.err)})
			continue
		}
		o.s.Index = i
		spans = append(spans, o.s)
	}
	annotation := map[string]bool{}
	for _, s := range spans {
		if s.LinksSet {
			annotation[s.TraceID] = true
		}
	}
	for _, s := range spans {
		explicit, _ := get(s.Attributes, "ag.type.trace")
		switch {
		case explicit == "annotation" || explicit == "invocation":
			// Kept: the OTLP client said so (the compatible platform loses it).
			s.TraceType = explicit.(string)
		case annotation[s.TraceID]:
			s.TraceType = "annotation"
		default:
			s.TraceType = "invocation"
		}
		sub(s.arena, s.Attributes, "ag", "type")["trace"] = traceTypeValue(s.TraceType)
	}
	RollUp(spans)
	return spans, rejected
}

// traceTypeValue is a trace type as an attribute value, without boxing
// the common ones again for every span (a constant's box is static).
func traceTypeValue(t string) any {
	switch t {
	case "invocation":
		return "invocation"
	case "annotation":
		return "annotation"
	}
	return t
}

func (n *Normalizer) now() time.Time {
	if n.Now != nil {
		return n.Now()
	}
	return time.Now()
}

// minSplit is the fewest spans a part of BatchIn normalises: below it, a
// goroutine costs more than it saves.
const minSplit = 32

func (n *Normalizer) span(r Raw, lim *Limits, res resourceCuts, a *Arena) (*Span, error) {
	// First of all: everything below is linear in what the limits leave.
	cut := lim.raw(&r, res)
	if r.Strict && !cut.zero() {
		return nil, &LimitError{Msg: cut.First}
	}
	s := Span{arena: a}
	var err error
	if s.TraceID, err = TraceID(r.TraceID); err != nil {
		return nil, err
	}
	if s.SpanID, err = SpanID(r.SpanID); err != nil {
		return nil, err
	}
	if r.ParentID != "" {
		if s.ParentID, err = SpanID(r.ParentID); err != nil {
			return nil, fmt.Errorf("parent_id: %w", err)
		}
	}
	if s.Start, s.End, err = n.times(r.Start, r.End); err != nil {
		return nil, err
	}
	if s.SpanKind, err = enum("span_kind", r.Kind, "SPAN_KIND_", SpanKinds, "SPAN_KIND_UNSPECIFIED"); err != nil {
		return nil, err
	}
	langfuseStatus(&r) // a Langfuse ERROR level is an error status
	if s.StatusCode, err = enum("status_code", r.StatusCode, "STATUS_CODE_", StatusCodes, "STATUS_CODE_UNSET"); err != nil {
		return nil, err
	}
	s.StatusMessage = r.StatusMessage
	s.SpanName = r.Name
	if s.SpanName == "" {
		s.SpanName = randomHex(6)
	}

	pad := &padding{left: 4 * lim.MaxAttributes, arena: a}
	var attrs map[string]any
	if r.OTLP {
		attrs = adapt(r.Attributes, pad)
	} else {
		attrs = unflatten(r.Attributes, pad)
	}
	if len(r.Resource) > 0 || r.ScopeName != "" {
		otel := sub(a, attrs, "otel")
		if len(r.Resource) > 0 {
			otel["resource"] = unflatten(r.Resource, pad)
		}
		if r.ScopeName != "" {
			scope := map[string]any{"name": r.ScopeName}
			if r.ScopeVersion != "" {
				scope["version"] = r.ScopeVersion
			}
			otel["scope"] = scope
		}
	}
	ag, unsupported := clean(attrs["ag"], a)
	attrs["ag"] = ag

	for _, e := range r.Events {
		ts := s.Start
		if e.Time != nil {
			if ts, err = Time(e.Time); err != nil {
				return nil, fmt.Errorf("event %q: %w", e.Name, err)
			}
		}
		s.Events = append(s.Events, Event{Name: e.Name, Time: ts, Attributes: unflatten(e.Attributes, pad)})
	}
	for _, l := range r.Links {
		var link Link
		if link.TraceID, err = TraceID(l.TraceID); err != nil {
			return nil, fmt.Errorf("link: %w", err)
		}
		if link.SpanID, err = SpanID(l.SpanID); err != nil {
			return nil, fmt.Errorf("link: %w", err)
		}
		link.Attributes = unflatten(l.Attributes, pad)
		if k, ok := get(link.Attributes, "key"); ok {
			link.Key = LeafText(k)
		}
		s.Links = append(s.Links, link)
	}
	s.LinksSet = r.LinksSet || len(s.Links) > 0
	if pad.dropped > 0 {
		cut.DroppedAttributes += pad.dropped
		cut.note("attributes", fmt.Sprintf("list indexes in dotted keys pad more than %d null elements (4 × TRACING_SPAN_MAX_ATTRIBUTES)", 4*lim.MaxAttributes))
		if r.Strict {
			return nil, &LimitError{Msg: cut.First}
		}
	}

	if err := n.derive(&s, r, ag, unsupported); err != nil {
		return nil, err
	}
	langfuseException(&s, r, ag)
	if len(unsupported) > 0 {
		ag["unsupported"] = unsupported
	}
	s.Attributes = attrs
	s.strict = r.Strict
	s.addCut(cut)
	return &s, nil
}

func (n *Normalizer) times(start, end any) (time.Time, time.Time, error) {
	var s, e time.Time
	var err error
	if start != nil {
		if s, err = Time(start); err != nil {
			return s, e, fmt.Errorf("start_time: %w", err)
		}
	}
	if end != nil {
		if e, err = Time(end); err != nil {
			return s, e, fmt.Errorf("end_time: %w", err)
		}
	}
	switch {
	case start == nil && end == nil:
		s = n.now().UTC().Truncate(time.Microsecond)
		e = s
	case start == nil:
		s = e
	case end == nil:
		e = s
	}
	return s.Truncate(time.Microsecond), e.Truncate(time.Microsecond), nil
}

// enum accepts the full name, the short name in any case, or the OTLP index.
func enum(field, v, prefix string, values []string, def string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return def, nil
	}
	if i, err := strconv.Atoi(v); err == nil {
		if i >= 0 && i < len(values) {
			return values[i], nil
		}
		return "", fmt.Errorf("%s %d is out of range", field, i)
	}
	up := strings.ToUpper(v)
	if !strings.HasPrefix(up, prefix) {
		up = prefix + up
	}
	for _, x := range values {
		if x == up {
			return x, nil
		}
	}
	return "", fmt.Errorf("%s %q is not one of %s", field, v, strings.Join(values, ", "))
}

// derive sets the span's type, identity, metrics, references, hashes and
// exception from the cleaned ag subtree.
func (n *Normalizer) derive(s *Span, r Raw, ag, unsupported map[string]any) error {
	s.SpanType = "task"
	var spanType any = "task" // the value stored: boxed once (a constant's box is static)
	if t, ok := get(ag, "type.span"); ok {
		s.SpanType, spanType = t.(string), t
	}
	sub(s.arena, ag, "type")["span"] = spanType
	if v, ok := get(ag, "session.id"); ok {
		s.SessionID = LeafText(v)
	}
	if v, ok := get(ag, "user.id"); ok {
		s.UserID = LeafText(v)
	}
	if v, ok := get(unsupported, "agent.id"); ok {
		// ag.agent is not part of the canonical schema, but the OTel agent id
		// is worth a column (the compatible platform loses it).
		s.AgentID = LeafText(v)
	}

	metrics := sub(s.arena, ag, "metrics")
	if ms := s.End.Sub(s.Start).Seconds() * 1000; ms > 0 {
		ms = math.Round(ms*1000) / 1000
		v := any(ms) // boxed once for both
		d := s.arena.obj()
		d["incremental"], d["cumulative"] = v, v
		metrics["duration"] = d
	}
	exceptions := 0
	var last *Event
	for i := range s.Events {
		if s.Events[i].Name == "exception" {
			exceptions++
			last = &s.Events[i]
		}
	}
	if len(s.Events) > 0 || s.StatusCode == "STATUS_CODE_ERROR" {
		if exceptions == 0 && s.StatusCode == "STATUS_CODE_ERROR" {
			exceptions = 1 // an error status without an exception event is still an error
		}
		metrics["errors"] = map[string]any{"incremental": float64(exceptions)}
	}
	if last != nil {
		// Stored, unlike the compatible platform, which computes it and drops it.
		exc := map[string]any{}
		for _, k := range []string{"type", "message", "stacktrace", "escaped"} {
			if v, ok := get(last.Attributes, "exception."+k); ok {
				exc[k] = v
			} else if v, ok := last.Attributes[k]; ok {
				exc[k] = v
			}
		}
		if len(exc) > 0 {
			if _, ok := ag["exception"]; !ok {
				ag["exception"] = exc
			}
		}
	}
	n.Prices.cost(s.arena, s.SpanType, ag, s.Start)
	if len(metrics) == 0 {
		delete(ag, "metrics")
	}

	refs, err := references(ag, r.References)
	if err != nil {
		return err
	}
	s.References = refs
	s.Hashes = hashes(s.References, s.Links)
	return nil
}

// references lists ag.references plus the native top-level references.
func references(ag map[string]any, native any) ([]Reference, error) {
	var out []Reference
	if m, ok := ag["references"].(map[string]any); ok {
		for _, k := range sortedKeys(m) {
			ref, _ := m[k].(map[string]any)
			out = append(out, Reference{Key: k, ID: str(ref["id"]), Slug: str(ref["slug"]), Version: str(ref["version"])})
		}
	}
	if list, ok := native.([]any); ok {
		for i, e := range list {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("references[%d] is not an object", i)
			}
			key, _ := get(m, "attributes.key")
			out = append(out, Reference{Key: str(key), ID: str(m["id"]), Slug: str(m["slug"]), Version: str(m["version"])})
		}
	}
	for i, r := range out {
		if r.ID == "" {
			continue
		}
		h, err := hexID(r.ID)
		if err != nil || len(h) != 32 {
			return nil, fmt.Errorf("reference %s id %q is not a UUID", r.Key, r.ID)
		}
		out[i].ID = h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	}
	return out, nil
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return LeafText(v)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
