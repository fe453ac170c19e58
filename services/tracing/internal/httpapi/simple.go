package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/services/tracing/internal/annotate"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
	"github.com/assayhq/assay/services/tracing/internal/query"
	"github.com/assayhq/assay/services/tracing/internal/tracewrite"
)

// simpleKind is one of the one-span trace families:
// simple traces, annotations and invocations share everything but their
// envelope key and what they require.
type simpleKind struct {
	prefix   string // route prefix
	item     string // envelope key of one item
	items    string
	linksKey string // query key for the batch GET by links
	refKey   string // reference that must be present ("" for none)
	flags    map[string]any
	// traceType restricts queries: annotation, invocation or both.
	traceTypes []string
}

var simpleKinds = []simpleKind{
	{prefix: "/simple/traces", item: "trace", items: "traces", linksKey: "links", traceTypes: []string{"invocation", "annotation"}},
	{prefix: "/annotations", item: "annotation", items: "annotations", linksKey: "annotation_links", refKey: "evaluator",
		flags: map[string]any{"is_evaluator": true}, traceTypes: []string{"annotation"}},
	{prefix: "/invocations", item: "invocation", items: "invocations", linksKey: "invocation_links", refKey: "application",
		traceTypes: []string{"invocation"}},
}

func (h *Handler) registerSimple(e *echo.Echo) {
	for _, k := range simpleKinds {
		e.POST(k.prefix, scoped(h.simpleCreate(k)))
		e.POST(k.prefix+"/query", scoped(h.simpleQuery(k)))
		e.GET(k.prefix+"/:id", scoped(h.simpleGet(k)))
		e.PATCH(k.prefix+"/:id", scoped(h.simpleEdit(k)))
		e.DELETE(k.prefix+"/:id", scoped(h.simpleDelete(k)))
	}
}

type simpleIn struct {
	Origin     string         `json:"origin"`
	Kind       string         `json:"kind"`
	Channel    string         `json:"channel"`
	Tags       map[string]any `json:"tags"`
	Meta       map[string]any `json:"meta"`
	Data       map[string]any `json:"data"`
	References map[string]any `json:"references"`
	Links      any            `json:"links"`

	// outputs are Data's outputs and outputsLoc where the request had them
	// (annotate.SplitData).
	outputs    any
	outputsLoc []any
}

func (k simpleKind) bind(c echo.Context, requireLinks bool) (simpleIn, error) {
	var body map[string]json.RawMessage
	if err := httpx.Bind(c, &body); err != nil {
		return simpleIn{}, err
	}
	raw, ok := body[k.item]
	if !ok {
		return simpleIn{}, errs.Field("Field required", nil, "body", k.item)
	}
	var in simpleIn
	if err := json.Unmarshal(raw, &in); err != nil {
		return simpleIn{}, errs.Field(err.Error(), nil, "body", k.item)
	}
	in.Origin, in.Kind, in.Channel = or(in.Origin, "custom"), or(in.Kind, "adhoc"), or(in.Channel, "api")
	if err := in.checkClass(k.item); err != nil {
		return simpleIn{}, err
	}
	if in.Data == nil {
		return simpleIn{}, errs.Field("Field required", nil, "body", k.item, "data")
	}
	d, err := annotate.SplitData(in.Data, []any{"body", k.item, "data"}, k.item == "annotation")
	if err != nil {
		return simpleIn{}, err
	}
	in.Data, in.outputs, in.outputsLoc = d.Stored, d.Outputs, d.OutputsLoc
	if requireLinks && in.Links == nil && k.item != "invocation" {
		return simpleIn{}, errs.Field("Field required", nil, "body", k.item, "links")
	}
	if err := checkLinks(in.Links, k.item); err != nil {
		return simpleIn{}, err
	}
	in.Links = dropIDlessLinks(in.Links)
	if k.refKey != "" {
		if _, ok := in.References[k.refKey]; !ok {
			return simpleIn{}, errs.Field("Field required", nil, "body", k.item, "references", k.refKey)
		}
	}
	return in, nil
}

// checkClass refuses an origin, kind or channel outside the allowed values
// with a 422 naming the field; an empty one is left to the caller.
func (in simpleIn) checkClass(item string) error {
	for _, field := range []string{"origin", "kind", "channel"} {
		v := map[string]string{"origin": in.Origin, "kind": in.Kind, "channel": in.Channel}[field]
		if v != "" && !containsStr(classValues[field], v) {
			return errs.Field("Input should be one of "+joinQuoted(classValues[field]), v, "body", item, field)
		}
	}
	return nil
}

// resolveWorkflow applies the compatible platform's rules: annotations always resolve (or
// create) their evaluator and check data against its outputs schema;
// invocations resolve (or create) their application; a simple trace
// resolves an evaluator only when it has one and non-empty links.
func (h *Handler) resolveWorkflow(c echo.Context, k simpleKind, sc scope.Scope, in *simpleIn) error {
	if h.Workflows == nil {
		return nil
	}
	req := annotate.Request{Kind: k.refKey, References: in.References, Outputs: in.outputs, OutputsLoc: in.outputsLoc,
		Validate: k.item == "annotation", Loc: []any{"body", k.item}}
	if k.refKey == "" {
		if _, ok := in.References["evaluator"]; !ok || !nonEmptyLinks(in.Links) {
			return nil
		}
		req.Kind = "evaluator"
	}
	return h.Workflows.Resolve(c.Request().Context(), sc, req)
}

// checkLinks accepts links as {key: link} or [link], each link an object
// (or null, which is skipped); anything else is a 422 naming it.
func checkLinks(links any, item string) error {
	switch l := links.(type) {
	case nil:
	case map[string]any:
		for _, key := range sortedMapKeys(l) {
			if _, terr := ingest.As[map[string]any](l[key], item, "links", key); terr != nil {
				return terr.Field()
			}
		}
	case []any:
		for i, e := range l {
			if _, terr := ingest.As[map[string]any](e, item, "links", i); terr != nil {
				return terr.Field()
			}
		}
	default:
		return (&ingest.TypeError{Loc: []any{item, "links"}, Want: "an object or a list"}).Field()
	}
	return nil
}

// dropIDlessLinks leaves out the links that lack a trace_id or a span_id
// (absent, null or ""), as the compatible platform does: its web app's
// older annotation drawers send {"invocation": {}} when the scenario has
// no invocation trace, and the annotation must still be stored. A link
// without both ids points at nothing an OTel link can name (a span id
// alone is not unique). Ids that are present stay checked by the ingest,
// so a malformed one is still refused. The answer echoes what is stored.
func dropIDlessLinks(links any) any {
	missing := func(v any) bool { return v == nil || v == "" }
	has := func(v any) bool {
		m, _ := v.(map[string]any)
		return m != nil && !missing(m["trace_id"]) && !missing(m["span_id"])
	}
	switch l := links.(type) {
	case map[string]any:
		out := make(map[string]any, len(l))
		for k, v := range l {
			if has(v) {
				out[k] = v
			}
		}
		return out
	case []any:
		out := make([]any, 0, len(l))
		for _, v := range l {
			if has(v) {
				out = append(out, v)
			}
		}
		return out
	}
	return links
}

func nonEmptyLinks(l any) bool {
	switch t := l.(type) {
	case map[string]any:
		return len(t) > 0
	case []any:
		return len(t) > 0
	}
	return false
}

func or(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func joinQuoted(l []string) string {
	out := ""
	for i, s := range l {
		if i > 0 {
			out += ", "
		}
		out += "'" + s + "'"
	}
	return out
}

// classValues are the allowed origins, kinds and channels (the compatible
// platform's);
// the first of each is what an omitted field means on create.
var classValues = map[string][]string{"origin": {"custom", "human", "auto"}, "kind": {"adhoc", "eval", "play"},
	"channel": {"api", "sdk", "web", "otlp"}}

// classFlag is the ag.flags key that records one value of origin, kind or
// channel. The compatible platform stores only is_feedback, is_custom, is_evaluation,
// is_sdk and is_web, so a play trace read back as adhoc and an otlp one as
// api; is_play and is_otlp keep those too. The defaults (auto, adhoc, api)
// are the absence of their field's flags, so a span written by the
// compatible platform's clients reads the same here.
var classFlag = map[string]map[string]string{
	"origin":  {"human": "is_feedback", "custom": "is_custom"},
	"kind":    {"eval": "is_evaluation", "play": "is_play"},
	"channel": {"sdk": "is_sdk", "web": "is_web", "otlp": "is_otlp"},
}

// classFlags lists the flags that origin, kind and channel set. (This was a
// map keyed by the conditions, a map[bool]string: every true condition
// overwrote the last, so only one flag survived.)
func classFlags(origin, kind, channel string) []string {
	var out []string
	for _, fv := range [][2]string{{"origin", origin}, {"kind", kind}, {"channel", channel}} {
		if f, ok := classFlag[fv[0]][fv[1]]; ok {
			out = append(out, f)
		}
	}
	return out
}

// raw builds the one span of a simple trace.
func (k simpleKind) raw(in simpleIn, traceID, spanID string) spanmodel.Raw {
	flags := map[string]any{}
	for f, v := range k.flags {
		flags[f] = v
	}
	for _, f := range classFlags(in.Origin, in.Kind, in.Channel) {
		flags[f] = true
	}
	ag := map[string]any{"type": map[string]any{"span": "task"}, "flags": flags, "data": in.Data}
	if in.Tags != nil {
		ag["tags"] = in.Tags
	}
	if in.Meta != nil {
		ag["meta"] = in.Meta
	}
	if in.References != nil {
		ag["references"] = in.References
	}
	name := "annotation"
	if k.item == "invocation" {
		name = "invocation"
	}
	if ev, ok := in.References[k.refKey].(map[string]any); ok {
		if slug, ok := ev["slug"].(string); ok && slug != "" {
			name = slug
		}
	}
	now := time.Now().UTC()
	// Strict: the answer echoes what was sent, so over a limit the whole
	// request is refused rather than stored trimmed.
	r := spanmodel.Raw{TraceID: traceID, SpanID: spanID, Name: name, Start: now, End: now,
		Attributes: map[string]any{"ag": ag}, Strict: true}
	switch l := in.Links.(type) {
	case map[string]any:
		r.LinksSet = true
		for _, key := range sortedMapKeys(l) {
			if m, ok := l[key].(map[string]any); ok {
				r.Links = append(r.Links, spanmodel.RawLink{TraceID: str(m["trace_id"]), SpanID: str(m["span_id"]), Attributes: map[string]any{"key": key}})
			}
		}
	case []any:
		r.LinksSet = true
		for _, e := range l {
			if m, ok := e.(map[string]any); ok && m["trace_id"] != nil && m["span_id"] != nil {
				r.Links = append(r.Links, spanmodel.RawLink{TraceID: str(m["trace_id"]), SpanID: str(m["span_id"]), Attributes: map[string]any{"key": "key"}})
			}
		}
	}
	return r
}

func newIDs() (string, string) {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:32], h[32:]
}

func (h *Handler) simpleCreate(k simpleKind) scopedFunc {
	return func(c echo.Context, sc scope.Scope) error {
		in, err := k.bind(c, true)
		if err != nil {
			return err
		}
		if err := h.resolveWorkflow(c, k, sc, &in); err != nil {
			return err
		}
		tid, sid := newIDs()
		res, err := h.Ingest.Ingest(c.Request().Context(), sc, []spanmodel.Raw{k.raw(in, tid, sid)}, nil)
		if err != nil {
			return err
		}
		if len(res.Rejected) > 0 {
			return tracewrite.RejectedSpan(res.Rejected[0], "tracing.invalid_"+k.item, res.Rejected[0].Msg)
		}
		out := k.out(in, tid, sid)
		status := http.StatusOK
		if k.item == "trace" {
			status = http.StatusAccepted
		}
		return c.JSON(status, map[string]any{"count": 1, k.item: out})
	}
}

func (k simpleKind) out(in simpleIn, tid, sid string) map[string]any {
	out := map[string]any{"trace_id": tid, "span_id": sid, "origin": in.Origin, "kind": in.Kind, "channel": in.Channel, "data": in.Data}
	if in.Tags != nil {
		out["tags"] = in.Tags
	}
	if in.Meta != nil {
		out["meta"] = in.Meta
	}
	if in.References != nil {
		out["references"] = in.References
	}
	if in.Links != nil {
		out["links"] = in.Links
	}
	return out
}

// fromSpan rebuilds the simple view of a stored span.
func (k simpleKind) fromSpan(p query.Parsed) map[string]any {
	ag, _ := p.Attrs["ag"].(map[string]any)
	flags, _ := ag["flags"].(map[string]any)
	class := map[string]string{"origin": "auto", "kind": "adhoc", "channel": "api"}
	for field, values := range classValues {
		for _, v := range values {
			if f, ok := classFlag[field][v]; ok && flags[f] == true {
				class[field] = v
				break
			}
		}
	}
	origin, kind, channel := class["origin"], class["kind"], class["channel"]
	out := map[string]any{"trace_id": p.TraceID, "span_id": p.SpanID, "origin": origin, "kind": kind, "channel": channel,
		"created_at": query.SpanJSON(p)["created_at"]}
	for _, f := range []string{"tags", "meta", "data", "references"} {
		if v, ok := ag[f]; ok {
			out[f] = v
		}
	}
	if p.Links != "" {
		var links []struct {
			TraceID    string         `json:"trace_id"`
			SpanID     string         `json:"span_id"`
			Attributes map[string]any `json:"attributes"`
		}
		if json.Unmarshal([]byte(p.Links), &links) == nil {
			m := map[string]any{}
			for _, l := range links {
				m[str(l.Attributes["key"])] = map[string]any{"trace_id": l.TraceID, "span_id": l.SpanID}
			}
			out["links"] = m
		}
	}
	return out
}

func (h *Handler) simpleFetch(c echo.Context, sc scope.Scope, k simpleKind) (query.Parsed, bool, error) {
	id, err := pathTraceID(c, "id")
	if err != nil {
		return query.Parsed{}, false, err
	}
	sids, err := idList(c, "span_id", "span_ids", spanmodel.SpanID)
	if err != nil {
		return query.Parsed{}, false, err
	}
	spans, err := h.Query.Spans(c.Request().Context(), sc.ProjectID.String(), []string{id}, sids)
	if err != nil {
		return query.Parsed{}, false, err
	}
	for _, s := range spans {
		if s.ParentID == "" {
			ag, _ := s.Attrs["ag"].(map[string]any)
			if d, ok := ag["data"].(map[string]any); ok && len(d) > 0 && containsStr(k.traceTypes, s.TraceType) {
				return s, true, nil
			}
		}
	}
	return query.Parsed{}, false, nil
}

func (h *Handler) simpleGet(k simpleKind) scopedFunc {
	return func(c echo.Context, sc scope.Scope) error {
		p, ok, err := h.simpleFetch(c, sc, k)
		if err != nil {
			return err
		}
		if !ok {
			return c.JSON(http.StatusOK, map[string]any{"count": 0})
		}
		return c.JSON(http.StatusOK, map[string]any{"count": 1, k.item: k.fromSpan(p)})
	}
}

// simpleEdit re-ingests the same ids with the new content, as the
// compatible platform does (keeping the name and start time, unlike it).
func (h *Handler) simpleEdit(k simpleKind) scopedFunc {
	return func(c echo.Context, sc scope.Scope) error {
		p, ok, err := h.simpleFetch(c, sc, k)
		if err != nil {
			return err
		}
		if !ok {
			return c.JSON(http.StatusOK, map[string]any{"count": 0})
		}
		in, err := k.bind(c, false)
		if err != nil {
			return err
		}
		if err := h.resolveWorkflow(c, k, sc, &in); err != nil {
			return err
		}
		raw := k.raw(in, p.TraceID, p.SpanID)
		raw.Name = p.SpanName
		res, err := h.Ingest.Ingest(c.Request().Context(), sc, []spanmodel.Raw{raw}, nil)
		if err != nil {
			return err
		}
		if len(res.Rejected) > 0 {
			return tracewrite.RejectedSpan(res.Rejected[0], "tracing.invalid_"+k.item, res.Rejected[0].Msg)
		}
		return c.JSON(http.StatusOK, map[string]any{"count": 1, k.item: k.out(in, p.TraceID, p.SpanID)})
	}
}

func (h *Handler) simpleDelete(k simpleKind) scopedFunc {
	return func(c echo.Context, sc scope.Scope) error {
		_, links, err := h.deleteSpans(c, sc)
		if err != nil {
			return err
		}
		if len(links) == 0 {
			return c.JSON(http.StatusOK, map[string]any{"count": 0})
		}
		return c.JSON(http.StatusOK, map[string]any{"count": 1, "link": links[0]})
	}
}

func (h *Handler) simpleQuery(k simpleKind) scopedFunc {
	return func(c echo.Context, sc scope.Scope) error {
		var body map[string]json.RawMessage
		if c.Request().ContentLength != 0 {
			if err := httpx.Bind(c, &body); err != nil {
				return err
			}
		}
		conds := []any{map[string]any{"field": "trace_type", "operator": "in", "value": toAny(k.traceTypes)},
			map[string]any{"field": "parent_id", "value": nil}}
		if raw, ok := body[k.item]; ok && string(raw) != "null" {
			var in simpleIn
			if err := json.Unmarshal(raw, &in); err != nil {
				return errs.Field(err.Error(), nil, "body", k.item)
			}
			if err := in.checkClass(k.item); err != nil {
				return err
			}
			conds = append(conds, simpleConditions(in)...)
		}
		if raw, ok := body[k.linksKey]; ok && string(raw) != "null" {
			var links []struct {
				TraceID string `json:"trace_id"`
			}
			if err := json.Unmarshal(raw, &links); err != nil {
				return errs.Field(err.Error(), nil, "body", k.linksKey)
			}
			ids := []any{}
			for _, l := range links {
				ids = append(ids, l.TraceID)
			}
			conds = append(conds, map[string]any{"field": "trace_id", "operator": "in", "value": ids})
		}
		var rw *query.RawWindowing
		if raw, ok := body["windowing"]; ok {
			if err := json.Unmarshal(raw, &rw); err != nil {
				return errs.Field(err.Error(), nil, "body", "windowing")
			}
		}
		w, err := rw.Parse("windowing")
		if err != nil {
			return err
		}
		filter, _ := json.Marshal(map[string]any{"conditions": conds})
		res, err := h.Query.Query(c.Request().Context(), sc.ProjectID.String(), query.Request{Focus: "span", Filter: filter, Windowing: w})
		if err != nil {
			return err
		}
		out := []map[string]any{}
		for _, p := range res.Spans {
			ag, _ := p.Attrs["ag"].(map[string]any)
			if d, ok := ag["data"].(map[string]any); ok && len(d) > 0 {
				out = append(out, k.fromSpan(p))
			}
		}
		return c.JSON(http.StatusOK, map[string]any{"count": len(out), k.items: out})
	}
}

func simpleConditions(in simpleIn) []any {
	var conds []any
	flag := func(name string, v bool) {
		conds = append(conds, map[string]any{"field": "attributes", "key": "ag.flags." + name, "value": v})
	}
	notFlag := func(name string) {
		conds = append(conds, map[string]any{"operator": "not", "conditions": []any{map[string]any{"field": "attributes", "key": "ag.flags." + name, "value": true}}})
	}
	// A value with a flag matches that flag; a default (auto, adhoc, api)
	// matches the absence of every flag of its field.
	for _, fv := range [][2]string{{"origin", in.Origin}, {"kind", in.Kind}, {"channel", in.Channel}} {
		if fv[1] == "" {
			continue
		}
		if f, ok := classFlag[fv[0]][fv[1]]; ok {
			flag(f, true)
			continue
		}
		for _, v := range classValues[fv[0]] {
			if f, ok := classFlag[fv[0]][v]; ok {
				notFlag(f)
			}
		}
	}
	for _, k := range sortedMapKeys(in.Tags) {
		conds = append(conds, map[string]any{"field": "attributes", "key": "ag.tags." + k, "value": in.Tags[k]})
	}
	for _, k := range sortedMapKeys(in.Meta) {
		conds = append(conds, map[string]any{"field": "attributes", "key": "ag.meta." + k, "value": in.Meta[k]})
	}
	for _, k := range sortedMapKeys(in.References) {
		if ref, ok := in.References[k].(map[string]any); ok {
			probe := map[string]any{"attributes": map[string]any{"key": k}}
			for _, f := range []string{"id", "slug", "version"} {
				if v, ok := ref[f]; ok {
					probe[f] = v
				}
			}
			conds = append(conds, map[string]any{"field": "references", "operator": "in", "value": []any{probe}})
		}
	}
	switch l := in.Links.(type) {
	case map[string]any:
		for _, k := range sortedMapKeys(l) {
			conds = append(conds, map[string]any{"field": "links", "operator": "in", "value": []any{l[k]}})
		}
	case []any:
		if len(l) > 0 {
			conds = append(conds, map[string]any{"field": "links", "operator": "in", "value": l})
		}
	}
	return conds
}
