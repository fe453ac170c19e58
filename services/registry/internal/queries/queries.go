// Package queries holds the saved trace query use cases: revision data
// validation, commits, the simple surface (its versioned.SimpleFamily),
// the family's git-model rules, and retrieving a revision and running its
// stored query against the tracing service.
package queries

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/tracingclient"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// Tracing runs a query; tracingclient.Client implements it.
type Tracing interface {
	Run(ctx context.Context, sc scope.Scope, q tracingclient.Query) (*tracingclient.Result, error)
}

// Data is the persisted part of a query revision's data.
type Data struct {
	Formatting *Formatting     `json:"formatting,omitempty"`
	Filtering  json.RawMessage `json:"filtering,omitempty"`
	Windowing  json.RawMessage `json:"windowing,omitempty"`
}

// Formatting chooses the query's focus and format.
type Formatting struct {
	Focus  *string `json:"focus,omitempty"`
	Format *string `json:"format,omitempty"`
}

var operators = map[string]bool{"and": true, "or": true, "not": true, "nand": true, "nor": true}

var conditionOps = map[string]bool{"is": true, "is_not": true, "eq": true, "neq": true, "gt": true, "lt": true, "gte": true,
	"lte": true, "btwn": true, "startswith": true, "endswith": true, "contains": true, "matches": true, "like": true,
	"in": true, "not_in": true, "has": true, "has_not": true, "exists": true, "not_exists": true}

// ParseData checks raw against the data model. trace_ids and traces are
// accepted (clients echo retrieved data back) but not persisted; an
// otherwise empty object is nil.
func ParseData(raw json.RawMessage, loc ...any) (json.RawMessage, error) {
	at := func(k ...any) []any { return append(append([]any{}, loc...), k...) }
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, errs.Field("Input should be a valid dictionary", json.RawMessage(raw), loc...)
	}
	var d Data
	for k, v := range m {
		if string(v) == "null" {
			continue
		}
		switch k {
		case "formatting":
			var f map[string]json.RawMessage
			if err := json.Unmarshal(v, &f); err != nil {
				return nil, errs.Field("Input should be a valid dictionary", v, at(k)...)
			}
			d.Formatting = &Formatting{}
			for fk, fv := range f {
				var s string
				if err := json.Unmarshal(fv, &s); err != nil && string(fv) != "null" {
					return nil, errs.Field("Input should be a valid string", fv, at(k, fk)...)
				}
				switch {
				case fk == "focus" && (s == "trace" || s == "span" || string(fv) == "null"):
					if s != "" {
						d.Formatting.Focus = &s
					}
				case fk == "format" && (s == "agenta" || s == "opentelemetry" || string(fv) == "null"):
					if s != "" {
						d.Formatting.Format = &s
					}
				case fk == "focus":
					return nil, errs.Field("Input should be 'trace' or 'span'", fv, at(k, fk)...)
				case fk == "format":
					return nil, errs.Field("Input should be 'agenta' or 'opentelemetry'", fv, at(k, fk)...)
				default:
					return nil, errs.Field("Extra inputs are not permitted", fv, at(k, fk)...)
				}
			}
		case "filtering":
			if err := checkFiltering(v, at(k)...); err != nil {
				return nil, err
			}
			d.Filtering = v
		case "windowing":
			var w versioned.Windowing
			if err := json.Unmarshal(v, &w); err != nil {
				return nil, errs.Field("Input should be a valid windowing: "+err.Error(), v, at(k)...)
			}
			if w.Order != nil && *w.Order != "ascending" && *w.Order != "descending" {
				return nil, errs.Field("Input should be 'ascending' or 'descending'", *w.Order, at(k, "order")...)
			}
			d.Windowing = v
		case "trace_ids", "traces":
		default:
			return nil, errs.Field("Extra inputs are not permitted", v, at(k)...)
		}
	}
	if d.Formatting == nil && d.Filtering == nil && d.Windowing == nil {
		return nil, nil
	}
	out, _ := json.Marshal(d)
	return out, nil
}

// checkFiltering validates the filter tree: the compatible platform drops bad
// filters silently at query time; we refuse them when they are saved.
func checkFiltering(raw json.RawMessage, loc ...any) error {
	at := func(k ...any) []any { return append(append([]any{}, loc...), k...) }
	var f map[string]json.RawMessage
	if err := json.Unmarshal(raw, &f); err != nil {
		return errs.Field("Input should be a valid dictionary", raw, loc...)
	}
	for k, v := range f {
		switch k {
		case "operator":
			var op string
			if json.Unmarshal(v, &op) != nil || !operators[op] {
				return errs.Field("Input should be 'and', 'or', 'not', 'nand' or 'nor'", v, at(k)...)
			}
		case "conditions":
			var conds []json.RawMessage
			if err := json.Unmarshal(v, &conds); err != nil {
				return errs.Field("Input should be a valid list", v, at(k)...)
			}
			for i, c := range conds {
				var cm map[string]json.RawMessage
				if err := json.Unmarshal(c, &cm); err != nil {
					return errs.Field("Input should be a condition or a filtering", c, at(k, i)...)
				}
				if _, nested := cm["conditions"]; nested {
					if err := checkFiltering(c, at(k, i)...); err != nil {
						return err
					}
					continue
				}
				if err := checkCondition(cm, at(k, i)...); err != nil {
					return err
				}
			}
		default:
			return errs.Field("Extra inputs are not permitted", v, at(k)...)
		}
	}
	return nil
}

func checkCondition(c map[string]json.RawMessage, loc ...any) error {
	at := func(k ...any) []any { return append(append([]any{}, loc...), k...) }
	var field string
	if json.Unmarshal(c["field"], &field) != nil || field == "" {
		return errs.Field("Field required", c["field"], at("field")...)
	}
	for k, v := range c {
		switch k {
		case "field", "value", "options":
		case "key":
			var s string
			if json.Unmarshal(v, &s) != nil && string(v) != "null" {
				return errs.Field("Input should be a valid string", v, at(k)...)
			}
		case "operator":
			var op string
			if json.Unmarshal(v, &op) != nil || !conditionOps[op] {
				return errs.Field("Unknown condition operator", v, at(k)...)
			}
		default:
			return errs.Field("Extra inputs are not permitted", v, at(k)...)
		}
	}
	return nil
}

// Service holds the query use cases: the simple surface, commits, and
// retrieving a revision and running its stored query.
type Service struct {
	reg     *versioned.Service
	tracing Tracing
}

// NewService returns a service; tracing may be nil when no tracing
// service is configured (include flags then answer 503).
func NewService(reg *versioned.Service, t Tracing) *Service { return &Service{reg: reg, tracing: t} }

// Run executes the revision's stored query; limit and next from the
// request override the stored windowing.
func (s *Service) Run(ctx context.Context, sc scope.Scope, r *versioned.Revision, override *versioned.Windowing) (*tracingclient.Result, error) {
	if s.tracing == nil {
		return nil, errs.New(errs.Unavailable, "queries.no_tracing", "No tracing service is configured to run queries.")
	}
	var d Data
	if r.Data != nil {
		_ = json.Unmarshal(r.Data, &d)
	}
	q := tracingclient.Query{Focus: "trace", Format: "agenta", Filtering: d.Filtering, Windowing: d.Windowing}
	if d.Formatting != nil {
		if d.Formatting.Focus != nil {
			q.Focus = *d.Formatting.Focus
		}
		if d.Formatting.Format != nil {
			q.Format = *d.Formatting.Format
		}
	}
	if override != nil && (override.Limit != nil || override.Next != nil) {
		w := map[string]any{}
		if d.Windowing != nil {
			_ = json.Unmarshal(d.Windowing, &w)
		}
		if override.Limit != nil {
			w["limit"] = *override.Limit
		}
		if override.Next != nil {
			w["next"] = override.Next.String()
		}
		q.Windowing, _ = json.Marshal(w)
	}
	return s.tracing.Run(ctx, sc, q)
}

// Commit stores the next revision of a query variant; initial requires it
// to be the variant's first.
func (s *Service) Commit(ctx context.Context, sc scope.Scope, r versioned.Revision, initial bool) (*versioned.Revision, error) {
	return s.reg.Commit(ctx, sc, versioned.Queries, versioned.Commit{Revision: r, Initial: initial})
}

// Include asks Retrieve to run the stored query: TraceIDs adds the
// matching trace ids to the revision's data, Traces the traces (and the
// ids); Window's limit and next override the stored windowing.
type Include struct {
	TraceIDs, Traces bool
	Window           *versioned.Windowing
}

// Retrieve resolves the query revision refs name (nil if none) and, when
// inc asks for it, runs its stored query and returns a copy whose data
// carries the results.
func (s *Service) Retrieve(ctx context.Context, sc scope.Scope, refs versioned.Refs, inc Include) (*versioned.Revision, error) {
	r, err := s.reg.Resolve(ctx, sc, versioned.Queries, "query", refs)
	if err != nil || r == nil || !inc.TraceIDs && !inc.Traces {
		return r, err
	}
	res, err := s.Run(ctx, sc, r, inc.Window)
	if err != nil {
		return nil, err
	}
	d := map[string]any{}
	if r.Data != nil {
		_ = json.Unmarshal(r.Data, &d)
	}
	if inc.TraceIDs {
		d["trace_ids"] = res.TraceIDs
	}
	if inc.Traces {
		d["traces"] = res.Traces
		if !inc.TraceIDs {
			d["trace_ids"] = res.TraceIDs
		}
	}
	cp := *r
	cp.Data, _ = json.Marshal(d)
	return &cp, nil
}

// RootOutputs reads each trace's root span outputs (ag.data.outputs) by
// trace id, as the ids were given (hex or UUID form): what an evaluation
// export shows as the application's output. Traces not found, or without
// outputs, are absent; without a tracing service nothing is found.
func (s *Service) RootOutputs(ctx context.Context, sc scope.Scope, traceIDs []string) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	if s.tracing == nil || len(traceIDs) == 0 {
		return out, nil
	}
	asked := map[string][]string{}
	ids := make([]string, 0, len(traceIDs))
	for _, id := range traceIDs {
		n := normTraceID(id)
		if _, ok := asked[n]; !ok {
			ids = append(ids, n)
		}
		asked[n] = append(asked[n], id)
	}
	// One trace_id condition: the tracing service reads those traces
	// directly, whatever their time.
	filter, _ := json.Marshal(map[string]any{"conditions": []any{map[string]any{"field": "trace_id", "operator": "in", "value": ids}}})
	res, err := s.tracing.Run(ctx, sc, tracingclient.Query{Focus: "trace", Format: "agenta", Filtering: filter})
	if err != nil {
		return nil, err
	}
	for _, t := range res.Traces {
		o := rootOutputs(t.Spans)
		if o == nil {
			continue
		}
		for _, id := range asked[normTraceID(t.TraceID)] {
			out[id] = o
		}
	}
	return out, nil
}

// rootOutputs is the outputs of the span without a parent in the trace.
func rootOutputs(spans map[string]json.RawMessage) json.RawMessage {
	for _, raw := range spans {
		var sp struct {
			ParentID   *string `json:"parent_id"`
			Attributes struct {
				Ag struct {
					Data struct {
						Outputs json.RawMessage `json:"outputs"`
					} `json:"data"`
				} `json:"ag"`
			} `json:"attributes"`
		}
		if json.Unmarshal(raw, &sp) != nil {
			continue
		}
		if sp.ParentID != nil && *sp.ParentID != "" {
			if _, ok := spans[*sp.ParentID]; ok {
				continue
			}
		}
		return sp.Attributes.Ag.Data.Outputs
	}
	return nil
}

// normTraceID is a trace id as 32 lowercase hex digits, however written.
func normTraceID(id string) string {
	return strings.ToLower(strings.ReplaceAll(id, "-", ""))
}
