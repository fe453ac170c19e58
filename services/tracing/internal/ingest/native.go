package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/spanmodel"
)

// DecodeJSON decodes a JSON body keeping numbers exact (19-digit
// nanosecond timestamps do not fit a float64).
func DecodeJSON(body []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	err := dec.Decode(&m)
	if err == nil && m != nil {
		if _, terr := dec.Token(); terr != io.EOF {
			err = fmt.Errorf("data after the JSON object at offset %d", dec.InputOffset())
		}
	}
	if err != nil || m == nil {
		msg := "body is not a JSON object"
		if err != nil {
			msg = fmt.Sprintf("malformed JSON body: %v", err)
		}
		return nil, errs.WithDetail(errs.Invalid, "request.malformed_body", msg, msg)
	}
	return m, nil
}

// TypeError is a field of a JSON body whose value has the wrong type.
type TypeError struct {
	Loc  []any  // the field: keys and list indexes
	Want string // what it must be: "a list", "an object", "a string"...
}

// Error names the field as a span's rejection does ("events[0].name must be
// a string").
func (e *TypeError) Error() string { return locText(e.Loc) + " must be " + e.Want }

// Field is the error as a 422 naming the field in the body.
func (e *TypeError) Field() error {
	return errs.Field("Input should be "+e.Want, nil, append([]any{"body"}, e.Loc...)...)
}

func locText(loc []any) string {
	var b strings.Builder
	for _, p := range loc {
		switch t := p.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(t) + "]")
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(fmt.Sprint(t))
		}
	}
	return b.String()
}

// As reads v, a value of a decoded JSON body, as a T ([]any,
// map[string]any or string); nil (absent or null) is T's zero value. Any
// other type is a *TypeError naming loc: every field of the native bodies
// is read through here, so none of the wrong type is silently ignored.
func As[T any](v any, loc ...any) (T, *TypeError) {
	var zero T
	if v == nil {
		return zero, nil
	}
	if t, ok := v.(T); ok {
		return t, nil
	}
	want := fmt.Sprintf("a %T", zero)
	switch any(zero).(type) {
	case []any:
		want = "a list"
	case map[string]any:
		want = "an object"
	case string:
		want = "a string"
	}
	return zero, &TypeError{Loc: loc, Want: want}
}

// NativeSpans reads the flat form {spans:[...]} and the nested form
// {traces:{tid:{spans:{name:node}}}}. A span that is not an object or has
// a field of the wrong type is rejected alone (it keeps its index in the
// order read); a wrong type outside the spans is a 422 naming the field.
func NativeSpans(body map[string]any) (raws []spanmodel.Raw, rejected []spanmodel.Error, err error) {
	list, terr := As[[]any](body["spans"], "spans")
	if terr != nil {
		return nil, nil, terr.Field()
	}
	traces, terr := As[map[string]any](body["traces"], "traces")
	if terr != nil {
		return nil, nil, terr.Field()
	}
	var rd reader
	for _, v := range list {
		rd.add(v, "", nil)
	}
	for _, tid := range sortedKeys(traces) {
		t, terr := As[map[string]any](traces[tid], "traces", tid)
		if terr != nil {
			return nil, nil, terr.Field()
		}
		nodes, terr := As[map[string]any](t["spans"], "traces", tid, "spans")
		if terr != nil {
			return nil, nil, terr.Field()
		}
		walkNodes(nodes, tid, rd.add)
	}
	return rd.raws, rd.rejected, nil
}

// NestedSpans reads one trace's {spans:{name:node}} tree; loc is where the
// trace is in the body.
func NestedSpans(trace map[string]any, traceID string, loc ...any) (raws []spanmodel.Raw, rejected []spanmodel.Error, err error) {
	nodes, terr := As[map[string]any](trace["spans"], append(loc, "spans")...)
	if terr != nil {
		return nil, nil, terr.Field()
	}
	var rd reader
	walkNodes(nodes, traceID, rd.add)
	return rd.raws, rd.rejected, nil
}

// reader collects the spans read and the rejected ones, by position.
type reader struct {
	raws     []spanmodel.Raw
	rejected []spanmodel.Error
	n        int
}

// add reads one span; bad is why it is rejected before it is read.
func (rd *reader) add(v any, traceID string, bad error) {
	if bad == nil {
		var r spanmodel.Raw
		if r, bad = nativeSpan(v, traceID); bad == nil {
			rd.raws = append(rd.raws, r)
		}
	}
	if bad != nil {
		rd.rejected = append(rd.rejected, spanmodel.Error{Index: rd.n, Msg: bad.Error()})
	}
	rd.n++
}

// walkNodes visits a {name: node | [node...]} map depth first; each node's
// children are in its own "spans", and a node whose "spans" is not an
// object is visited with that error (and its children are not).
func walkNodes(m map[string]any, traceID string, visit func(node any, traceID string, bad error)) {
	for _, name := range sortedKeys(m) {
		nodes := []any{m[name]}
		if list, ok := m[name].([]any); ok {
			nodes = list
		}
		for _, n := range nodes {
			node, ok := n.(map[string]any)
			if !ok {
				visit(n, traceID, nil) // rejected by nativeSpan: not an object
				continue
			}
			if _, has := node["span_name"]; !has {
				node["span_name"] = name
			}
			children, terr := As[map[string]any](node["spans"], "spans")
			if terr != nil {
				visit(n, traceID, terr)
				continue
			}
			visit(n, traceID, nil)
			walkNodes(children, traceID, visit)
		}
	}
}

func nativeSpan(v any, traceID string) (spanmodel.Raw, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return spanmodel.Raw{}, fmt.Errorf("span is not an object")
	}
	var r spanmodel.Raw
	var err error
	str := func(field string) string {
		if err != nil {
			return ""
		}
		if n, ok := m[field].(json.Number); ok {
			return n.String()
		}
		s, terr := As[string](m[field], field)
		if terr != nil {
			err = terr
		}
		return s
	}
	r.TraceID = str("trace_id")
	if r.TraceID == "" {
		r.TraceID = traceID
	}
	r.SpanID = str("span_id")
	r.ParentID = str("parent_id")
	r.Name = str("span_name")
	r.Kind = str("span_kind")
	r.StatusCode = str("status_code")
	r.StatusMessage = str("status_message")
	if err != nil {
		return r, err
	}
	r.Start, r.End = timeValue(m["start_time"]), timeValue(m["end_time"])
	attrs, terr := As[map[string]any](m["attributes"], "attributes")
	if terr != nil {
		return r, terr
	}
	r.Attributes, _ = Numbers(attrs).(map[string]any)
	if r.Attributes == nil {
		r.Attributes = map[string]any{}
	}
	events, terr := As[[]any](m["events"], "events")
	if terr != nil {
		return r, terr
	}
	for i, e := range events {
		em, ok := e.(map[string]any)
		if !ok {
			return r, &TypeError{Loc: []any{"events", i}, Want: "an object"}
		}
		name, terr := As[string](em["name"], "events", i, "name")
		if terr != nil {
			return r, terr
		}
		attrs, terr := As[map[string]any](em["attributes"], "events", i, "attributes")
		if terr != nil {
			return r, terr
		}
		Numbers(attrs)
		r.Events = append(r.Events, spanmodel.RawEvent{Name: name, Time: timeValue(em["timestamp"]), Attributes: attrs})
	}
	if l, present := m["links"]; present && l != nil {
		r.LinksSet = true
		var list []any
		var loc func(i int) []any
		switch t := l.(type) {
		case []any:
			list = t
			loc = func(i int) []any { return []any{"links", i} }
		case map[string]any: // {name: {trace_id, span_id}}
			keys := sortedKeys(t)
			for _, k := range keys {
				lm, terr := As[map[string]any](t[k], "links", k)
				if terr != nil {
					return r, terr
				}
				if lm == nil {
					continue
				}
				lm["attributes"] = map[string]any{"key": k}
				list = append(list, lm)
			}
			loc = func(i int) []any { return []any{"links", keys[i]} }
		default:
			return r, &TypeError{Loc: []any{"links"}, Want: "a list or an object"}
		}
		for i, e := range list {
			lm, ok := e.(map[string]any)
			if !ok {
				return r, &TypeError{Loc: loc(i), Want: "an object"}
			}
			tid, terr := As[string](lm["trace_id"], append(loc(i), "trace_id")...)
			if terr != nil {
				return r, terr
			}
			sid, terr := As[string](lm["span_id"], append(loc(i), "span_id")...)
			if terr != nil {
				return r, terr
			}
			attrs, terr := As[map[string]any](lm["attributes"], append(loc(i), "attributes")...)
			if terr != nil {
				return r, terr
			}
			Numbers(attrs)
			r.Links = append(r.Links, spanmodel.RawLink{TraceID: tid, SpanID: sid, Attributes: attrs})
		}
	}
	refs, terr := As[[]any](m["references"], "references")
	if terr != nil {
		return r, terr
	}
	if refs != nil {
		r.References = Numbers(refs)
	}
	return r, nil
}

// timeValue keeps a JSON number's digits, so its unit can be read from them.
func timeValue(v any) any {
	if n, ok := v.(json.Number); ok {
		return n.String()
	}
	return v
}

// Numbers turns json.Number into float64 throughout v, in place.
func Numbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, x := range t {
			t[k] = Numbers(x)
		}
	case []any:
		for i, x := range t {
			t[i] = Numbers(x)
		}
	}
	return v
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
