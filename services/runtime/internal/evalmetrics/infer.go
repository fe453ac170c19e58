package evalmetrics

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/assayhq/assay/pkg/scope"
)

// Spans reads the outputs (ag.data.outputs, as the tracing read side
// returns them) of the root spans of the given traces; a trace without a
// stored root is left out. At most MaxInferTraces ids per call.
type Spans interface {
	RootOutputs(ctx context.Context, sc scope.Scope, traceIDs []string) ([]any, error)
}

// MaxInferTraces is how many of a step's traces Infer reads: a schema
// needs the shapes the evaluator answers with, not every answer, and the
// tracing filter takes at most 1,000 values (TRACING_QUERY_FILTER_MAX_VALUES).
const MaxInferTraces = 1000

// Infer builds an outputs schema for a schemaless evaluator step from the
// outputs of its cells' traces (the first MaxInferTraces with a trace),
// as genson does: see InferSchema. Failed cells' traces have no outputs
// and add nothing. It returns nil when no trace had outputs.
func (c *Computer) Infer(ctx context.Context, sc scope.Scope, step Step, cells []Cell) (json.RawMessage, error) {
	if c.Spans == nil {
		return nil, fmt.Errorf("evalmetrics: no span reader to infer a schema with")
	}
	seen := map[string]bool{}
	var ids []string
	for _, cell := range cells {
		if cell.StepKey != step.Key || cell.TraceID == "" || seen[cell.TraceID] {
			continue
		}
		seen[cell.TraceID] = true
		ids = append(ids, cell.TraceID)
		if len(ids) == MaxInferTraces {
			break
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	values, err := c.Spans.RootOutputs(ctx, sc, ids)
	if err != nil {
		return nil, fmt.Errorf("infer the outputs schema of step %s: %w", step.Key, err)
	}
	schema := InferSchema(values)
	if schema == nil {
		return nil, nil
	}
	return json.Marshal(schema)
}

// InferSchema is the JSON Schema that all values fit, built like genson's
// (https://github.com/wolverdude/GenSON): each value gets the schema of
// its type (integer for whole numbers, object with properties and
// required, array with the merged schema of its items), and schemas merge
// per type: an object's properties merge by key and stay required only
// when every object had them; integer and number make number; other types
// side by side make a type list (["boolean", "string"]), or anyOf when an
// object or array is among them. nil values (JSON null) add "null"; no
// values at all give nil. Depth is bounded (maxSchemaDepth): deeper parts
// get an empty schema (anything).
func InferSchema(values []any) map[string]any {
	var s *node
	for _, v := range values {
		if v == nil {
			continue // no outputs: a failed evaluator
		}
		s = merge(s, of(v, 0))
	}
	if s == nil {
		return nil
	}
	return s.schema()
}

// node is a schema under construction: one entry per JSON type seen.
type node struct {
	types    map[string]bool
	props    map[string]*node // objects' keys
	had      map[string]int   // how many objects had each key
	objects  int              // how many objects were seen
	items    *node            // arrays
	anything bool             // past the depth bound
}

func of(v any, depth int) *node {
	n := &node{types: map[string]bool{}}
	if depth > maxSchemaDepth {
		n.anything = true
		return n
	}
	switch t := v.(type) {
	case nil:
		n.types["null"] = true
	case bool:
		n.types["boolean"] = true
	case float64:
		if t == math.Trunc(t) && !math.IsInf(t, 0) {
			n.types["integer"] = true
		} else {
			n.types["number"] = true
		}
	case json.Number:
		if _, err := t.Int64(); err == nil {
			n.types["integer"] = true
		} else {
			n.types["number"] = true
		}
	case string:
		n.types["string"] = true
	case []any:
		n.types["array"] = true
		for _, e := range t {
			n.items = merge(n.items, of(e, depth+1))
		}
	case map[string]any:
		n.types["object"] = true
		n.objects = 1
		n.props, n.had = map[string]*node{}, map[string]int{}
		for k, e := range t {
			n.props[k] = of(e, depth+1)
			n.had[k] = 1
		}
	default:
		n.anything = true
	}
	return n
}

func merge(a, b *node) *node {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	a.anything = a.anything || b.anything
	for t := range b.types {
		a.types[t] = true
	}
	if b.objects > 0 {
		if a.props == nil {
			a.props, a.had = map[string]*node{}, map[string]int{}
		}
		for k, v := range b.props {
			a.props[k] = merge(a.props[k], v)
			a.had[k] += b.had[k]
		}
		a.objects += b.objects
	}
	if b.items != nil {
		a.items = merge(a.items, b.items)
	}
	return a
}

func (n *node) schema() map[string]any {
	if n.anything {
		return map[string]any{}
	}
	if n.types["integer"] && n.types["number"] {
		delete(n.types, "integer")
	}
	names := make([]string, 0, len(n.types))
	for t := range n.types {
		names = append(names, t)
	}
	sort.Strings(names)
	one := func(t string) map[string]any {
		s := map[string]any{"type": t}
		switch t {
		case "object":
			props := map[string]any{}
			for k, v := range n.props {
				props[k] = v.schema()
			}
			s["properties"] = props
			var req []string
			for k, c := range n.had {
				if c == n.objects {
					req = append(req, k)
				}
			}
			if len(req) > 0 {
				sort.Strings(req)
				s["required"] = req
			}
		case "array":
			if n.items != nil {
				s["items"] = n.items.schema()
			} else {
				s["items"] = map[string]any{}
			}
		}
		return s
	}
	if len(names) == 1 {
		return one(names[0])
	}
	if !n.types["object"] && !n.types["array"] {
		list := make([]any, len(names))
		for i, t := range names {
			list[i] = t
		}
		return map[string]any{"type": list}
	}
	var alts []any
	for _, t := range names {
		alts = append(alts, one(t))
	}
	return map[string]any{"anyOf": alts}
}
