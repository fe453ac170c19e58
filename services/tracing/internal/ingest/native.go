package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/tracing/internal/normalize"
)

// DecodeJSON decodes a JSON body keeping numbers exact (19-digit
// nanosecond timestamps do not fit a float64).
func DecodeJSON(body []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		msg := "body is not a JSON object"
		if err != nil {
			msg = fmt.Sprintf("malformed JSON body: %v", err)
		}
		return nil, errs.WithDetail(errs.Invalid, "request.malformed_body", msg, msg)
	}
	return m, nil
}

// NativeSpans reads the flat form {spans:[...]} and the nested form
// {traces:{tid:{spans:{name:node}}}}. A span that is not an object or has
// a field of the wrong type is rejected alone (it keeps its index in the
// order read).
func NativeSpans(body map[string]any) (raws []normalize.Raw, rejected []normalize.Error) {
	idx := 0
	add := func(v any, traceID string) {
		r, err := nativeSpan(v, traceID)
		if err != nil {
			rejected = append(rejected, normalize.Error{Index: idx, Msg: err.Error()})
		} else {
			raws = append(raws, r)
		}
		idx++
	}
	if list, ok := body["spans"].([]any); ok {
		for _, v := range list {
			add(v, "")
		}
	}
	if traces, ok := body["traces"].(map[string]any); ok {
		for _, tid := range sortedKeys(traces) {
			t, _ := traces[tid].(map[string]any)
			walkNodes(t["spans"], tid, add)
		}
	}
	return raws, rejected
}

// NestedSpans reads one trace's {spans:{name:node}} tree.
func NestedSpans(trace map[string]any, traceID string) (raws []normalize.Raw, rejected []normalize.Error) {
	idx := 0
	walkNodes(trace["spans"], traceID, func(v any, tid string) {
		r, err := nativeSpan(v, tid)
		if err != nil {
			rejected = append(rejected, normalize.Error{Index: idx, Msg: err.Error()})
		} else {
			raws = append(raws, r)
		}
		idx++
	})
	return raws, rejected
}

// walkNodes visits a {name: node | [node...]} map depth first; each node's
// children are in its own "spans".
func walkNodes(v any, traceID string, visit func(any, string)) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for _, name := range sortedKeys(m) {
		nodes := []any{m[name]}
		if list, ok := m[name].([]any); ok {
			nodes = list
		}
		for _, n := range nodes {
			node, ok := n.(map[string]any)
			if ok {
				if _, has := node["span_name"]; !has {
					node["span_name"] = name
				}
			}
			visit(n, traceID)
			if ok {
				walkNodes(node["spans"], traceID, visit)
			}
		}
	}
}

func nativeSpan(v any, traceID string) (normalize.Raw, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return normalize.Raw{}, fmt.Errorf("span is not an object")
	}
	var r normalize.Raw
	var err error
	str := func(field string) string {
		if err != nil {
			return ""
		}
		switch t := m[field].(type) {
		case nil:
			return ""
		case string:
			return t
		case json.Number:
			return t.String()
		default:
			err = fmt.Errorf("%s must be a string", field)
			return ""
		}
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
	if a, ok := m["attributes"]; ok && a != nil {
		am, ok := a.(map[string]any)
		if !ok {
			return r, fmt.Errorf("attributes must be an object")
		}
		r.Attributes = Numbers(am).(map[string]any)
	}
	if r.Attributes == nil {
		r.Attributes = map[string]any{}
	}
	if ev, ok := m["events"].([]any); ok {
		for i, e := range ev {
			em, ok := e.(map[string]any)
			if !ok {
				return r, fmt.Errorf("events[%d] must be an object", i)
			}
			name, _ := em["name"].(string)
			attrs, _ := Numbers(em["attributes"]).(map[string]any)
			r.Events = append(r.Events, normalize.RawEvent{Name: name, Time: timeValue(em["timestamp"]), Attributes: attrs})
		}
	}
	if l, present := m["links"]; present && l != nil {
		r.LinksSet = true
		var list []any
		switch t := l.(type) {
		case []any:
			list = t
		case map[string]any: // {name: {trace_id, span_id}}
			for _, k := range sortedKeys(t) {
				lm, _ := t[k].(map[string]any)
				if lm == nil {
					continue
				}
				lm["attributes"] = map[string]any{"key": k}
				list = append(list, lm)
			}
		default:
			return r, fmt.Errorf("links must be a list")
		}
		for i, e := range list {
			lm, ok := e.(map[string]any)
			if !ok {
				return r, fmt.Errorf("links[%d] must be an object", i)
			}
			tid, _ := lm["trace_id"].(string)
			sid, _ := lm["span_id"].(string)
			attrs, _ := Numbers(lm["attributes"]).(map[string]any)
			r.Links = append(r.Links, normalize.RawLink{TraceID: tid, SpanID: sid, Attributes: attrs})
		}
	}
	r.References = Numbers(m["references"])
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
