package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	ev "github.com/assayhq/assay/services/registry/internal/evaluations"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/wire"
)

// decodeAt unmarshals v into dst; a type error is a 422 naming the field
// under loc (the path encoding/json reports, split on dots).
func decodeAt(v json.RawMessage, dst any, loc ...any) error {
	err := json.Unmarshal(v, dst)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		at := append([]any{}, loc...)
		if te.Field != "" {
			for _, p := range strings.Split(te.Field, ".") {
				at = append(at, p)
			}
		}
		return errs.Field("Input should be a valid "+te.Value+" of type "+te.Type.String(), nil, at...)
	}
	var pe *time.ParseError
	if errors.As(err, &pe) {
		return errs.Field("Input should be a valid datetime", pe.Value, loc...)
	}
	return errs.Field("Input is not valid here: "+err.Error(), nil, loc...)
}

// maxDepth bounds the nesting of a record's JSON. PostgreSQL parses jsonb
// recursively and fails past its stack depth (about 20,000 levels with the
// default max_stack_depth; Go's decoder already stops bodies at 10,000), so
// this is a margin, not the only guard: records and filters nested deeper
// than any real one are a 422 naming the field, and the cost of reading
// them back stays bounded.
const maxDepth = 128

// depth is the deepest nesting of objects and arrays in v (strings skipped).
func depth(v []byte) int {
	d, deepest, inStr, esc := 0, 0, false, false
	for _, c := range v {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			d++
			deepest = max(deepest, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
}

// checkDepth refuses v nested deeper than maxDepth, naming loc.
func checkDepth(v []byte, loc ...any) error {
	if depth(v) > maxDepth {
		return errs.Field("JSON should be nested at most 128 levels deep", nil, loc...)
	}
	return nil
}

// items reads body[plural] as a list of T, or body[single] as one T when
// the list is absent (the compatible platform takes the list; one object is
// accepted too). Either is required.
func items[T any](b *wire.Body, plural, single string) ([]T, error) {
	if v := b.Value(plural); !wire.IsNull(v) {
		if err := checkDepth(v, "body", plural); err != nil {
			return nil, err
		}
		var raw []json.RawMessage
		if err := json.Unmarshal(v, &raw); err != nil {
			return nil, errs.Field("Input should be a valid list", nil, "body", plural)
		}
		out := make([]T, len(raw))
		for i, r := range raw {
			if r = bytes.TrimSpace(r); len(r) == 0 || r[0] != '{' {
				return nil, errs.Field("Input should be a valid dictionary", nil, "body", plural, i)
			}
			if err := decodeAt(r, &out[i], "body", plural, i); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	if single != "" {
		if v := b.Value(single); !wire.IsNull(v) {
			one, err := item[T](b, single)
			return []T{one}, err
		}
	}
	return nil, errs.Field("Field required", nil, "body", plural)
}

// item reads body[key] as one T (required).
func item[T any](b *wire.Body, key string) (T, error) {
	var out T
	v := b.Value(key)
	if wire.IsNull(v) {
		return out, errs.Field("Field required", nil, "body", key)
	}
	if v = bytes.TrimSpace(v); v[0] != '{' {
		return out, errs.Field("Input should be a valid dictionary", nil, "body", key)
	}
	if err := checkDepth(v, "body", key); err != nil {
		return out, err
	}
	return out, decodeAt(v, &out, "body", key)
}

// idList reads body[key] as a list of UUIDs (required).
func idList(b *wire.Body, key string) ([]uuid.UUID, error) {
	v := b.Value(key)
	if wire.IsNull(v) {
		return nil, errs.Field("Field required", nil, "body", key)
	}
	var ss []string
	if err := json.Unmarshal(v, &ss); err != nil {
		return nil, errs.Field("Input should be a valid list of UUIDs", nil, "body", key)
	}
	out := make([]uuid.UUID, len(ss))
	for i, s := range ss {
		id, err := uuid.Parse(s)
		if err != nil {
			return nil, errs.Field("Input should be a valid UUID", s, "body", key, i)
		}
		out[i] = id
	}
	return out, nil
}

// filterKeys are the filter keys each record kind takes (singular and
// plural forms); any other key is a 422, so a misspelt filter never
// silently returns everything.
var filterKeys = map[ev.Kind][]string{
	ev.KindRun: {"id", "ids", "status", "statuses", "flags", "tags", "meta", "references", "name", "description"},
	ev.KindScenario: {"id", "ids", "run_id", "run_ids", "status", "statuses", "flags", "tags", "meta",
		"timestamp", "timestamps", "interval", "intervals"},
	ev.KindResult: {"id", "ids", "run_id", "run_ids", "scenario_id", "scenario_ids", "step_key", "step_keys",
		"repeat_idx", "repeat_idxs", "status", "statuses", "trace_id", "trace_ids", "testcase_id", "testcase_ids",
		"hash_id", "hash_ids", "flags", "tags", "meta", "timestamp", "timestamps", "timestamp_from", "timestamp_before",
		"interval", "intervals"},
	ev.KindMetric: {"id", "ids", "run_id", "run_ids", "scenario_id", "scenario_ids", "status", "statuses",
		"flags", "tags", "meta", "timestamp", "timestamps", "interval", "intervals"},
	ev.KindQueue: {"id", "ids", "run_id", "run_ids", "status", "statuses", "flags", "tags", "meta", "name", "description",
		"include_archived"},
}

// bindFilter reads the filter object body[key] of a kind (absent: no
// filter) and the top-level windowing.
func bindFilter(b *wire.Body, key string, kind ev.Kind) (ev.Filter, error) {
	var f ev.Filter
	f.Windowing = b.Windowing()
	if err := wire.ErrOf(b); err != nil {
		return f, err
	}
	f.IncludeArchived = b.Bool(false, "include_archived")
	if err := checkDepth(b.Value(key), "body", key); err != nil {
		return f, err
	}
	s := b.Sub(key)
	if err := wire.ErrOf(b); err != nil || s == nil {
		return f, err
	}
	allowed := map[string]bool{}
	for _, k := range filterKeys[kind] {
		allowed[k] = true
	}
	for k := range s.Map() {
		if !allowed[k] {
			return f, errs.Field("Unknown filter for "+string(kind)+"s", nil, "body", key, k)
		}
	}
	loc := []any{"body", key}
	var err error
	if f.IDs, err = uuids(s, loc, "id", "ids"); err != nil {
		return f, err
	}
	if f.RunIDs, err = uuids(s, loc, "run_id", "run_ids"); err != nil {
		return f, err
	}
	if f.HasScenario, err = presence(s, loc, "scenario_id", "scenario_ids"); err != nil {
		return f, err
	}
	if f.HasScenario == nil {
		if f.ScenarioIDs, err = uuids(s, loc, "scenario_id", "scenario_ids"); err != nil {
			return f, err
		}
	}
	if f.TestcaseIDs, err = uuids(s, loc, "testcase_id", "testcase_ids"); err != nil {
		return f, err
	}
	if f.StepKeys, err = strs(s, loc, "step_key", "step_keys"); err != nil {
		return f, err
	}
	if f.HashIDs, err = strs(s, loc, "hash_id", "hash_ids"); err != nil {
		return f, err
	}
	traces, err := strs(s, loc, "trace_id", "trace_ids")
	if err != nil {
		return f, err
	}
	for i, t := range traces {
		n, ok := ev.NormTraceID(t)
		if !ok {
			return f, errs.Field("Input should be a trace id (32 hex characters)", t, "body", key, "trace_ids", i)
		}
		f.TraceIDs = append(f.TraceIDs, n)
	}
	sts, err := strs(s, loc, "status", "statuses")
	if err != nil {
		return f, err
	}
	for i, st := range sts {
		if !validStatus(ev.Status(st)) {
			return f, errs.Field("Input should be a status", st, "body", key, "statuses", i)
		}
		f.Statuses = append(f.Statuses, ev.Status(st))
	}
	if f.RepeatIdxs, err = ints(s, loc, "repeat_idx", "repeat_idxs"); err != nil {
		return f, err
	}
	if f.Intervals, err = ints(s, loc, "interval", "intervals"); err != nil {
		return f, err
	}
	for _, n := range append(append([]int{}, f.RepeatIdxs...), f.Intervals...) {
		if n < 0 || n > math.MaxInt32 {
			return f, errs.Field("Input should be between 0 and 2147483647", n, "body", key)
		}
	}
	if f.HasTimestamp, err = presence(s, loc, "timestamp", "timestamps"); err != nil {
		return f, err
	}
	if f.HasTimestamp == nil {
		if f.Timestamps, err = times(s, loc, "timestamp", "timestamps"); err != nil {
			return f, err
		}
	}
	// A range of timestamps, [from, before): ANDed with the other filters.
	f.TimestampFrom, f.TimestampBefore = s.Time("timestamp_from"), s.Time("timestamp_before")
	f.Flags, f.Tags, f.Meta = s.Object("flags"), s.Object("tags"), s.Object("meta")
	f.Name, f.Description = s.Str("name"), s.Str("description")
	if s.Has("include_archived") {
		f.IncludeArchived = s.Bool(false, "include_archived")
	}
	if err := wire.ErrOf(s); err != nil {
		return f, err
	}
	if f.References, err = references(s.Value("references"), "body", key, "references"); err != nil {
		return f, err
	}
	return f, nil
}

func validStatus(st ev.Status) bool {
	for _, s := range ev.Statuses {
		if s == st {
			return true
		}
	}
	return false
}

// references reads a run.references filter: a list of reference objects
// ({id?, slug?, version?, key?}), or an object of them by name, which
// names the key. A run matches when its flattened references contain
// every one.
func references(v json.RawMessage, loc ...any) (json.RawMessage, error) {
	if wire.IsNull(v) {
		return nil, nil
	}
	var list []map[string]string
	if json.Unmarshal(v, &list) != nil {
		var byName map[string]map[string]string
		if err := json.Unmarshal(v, &byName); err != nil {
			return nil, errs.Field("Input should be a list of references ({id, slug, version}) or an object of them by name", nil, loc...)
		}
		for name, r := range byName {
			if r == nil {
				r = map[string]string{}
			}
			r["key"] = name
			list = append(list, r)
		}
	}
	for i, r := range list {
		for k := range r {
			switch k {
			case "id", "slug", "version", "key", "step_key":
			default:
				return nil, errs.Field("A reference has id, slug, version, key or step_key", k, append(append([]any{}, loc...), i, k)...)
			}
		}
		if id, ok := r["id"]; ok {
			u, err := uuid.Parse(id)
			if err != nil {
				return nil, errs.Field("Input should be a valid UUID", id, append(append([]any{}, loc...), i, "id")...)
			}
			r["id"] = u.String()
		}
	}
	out, _ := json.Marshal(list)
	return out, nil
}

// presence reads a boolean in place of a list of ids or timestamps (the
// compatible clients' scenario_ids: false for run-level records, true for
// per-scenario ones): true keeps records where the field is set, false
// those where it is not. Nil when neither key holds a boolean; the
// singular and plural keys must not disagree.
func presence(s *wire.Body, loc []any, single, plural string) (*bool, error) {
	var out *bool
	for _, k := range []string{single, plural} {
		switch v := string(bytes.TrimSpace(s.Value(k))); v {
		case "true", "false":
			b := v == "true"
			if out != nil && *out != b {
				return nil, errs.Field("Input should agree with "+single, b, append(append([]any{}, loc...), k)...)
			}
			out = &b
		}
	}
	if out != nil && (!wire.IsNull(s.Value(single)) && !isBool(s.Value(single)) || !wire.IsNull(s.Value(plural)) && !isBool(s.Value(plural))) {
		return nil, errs.Field("Input should be a boolean, or a list: not both", nil, append(append([]any{}, loc...), plural)...)
	}
	return out, nil
}

func isBool(v json.RawMessage) bool {
	t := string(bytes.TrimSpace(v))
	return t == "true" || t == "false"
}

// one or many: a filter key in its singular form (one value) or plural
// form (a list); both together are merged.
func many[T any](s *wire.Body, loc []any, single, plural string, msg string) ([]T, error) {
	var out []T
	if v := s.Value(single); !wire.IsNull(v) {
		var x T
		if json.Unmarshal(v, &x) != nil {
			return nil, errs.Field(msg, nil, append(append([]any{}, loc...), single)...)
		}
		out = append(out, x)
	}
	if v := s.Value(plural); !wire.IsNull(v) {
		var xs []T
		if json.Unmarshal(v, &xs) != nil {
			return nil, errs.Field(msg+" list", nil, append(append([]any{}, loc...), plural)...)
		}
		out = append(out, xs...)
	}
	return out, nil
}

func uuids(s *wire.Body, loc []any, single, plural string) ([]uuid.UUID, error) {
	ss, err := many[string](s, loc, single, plural, "Input should be a valid UUID")
	if err != nil || ss == nil {
		return nil, err
	}
	out := make([]uuid.UUID, len(ss))
	for i, x := range ss {
		id, err := uuid.Parse(x)
		if err != nil {
			return nil, errs.Field("Input should be a valid UUID", x, append(append([]any{}, loc...), plural, i)...)
		}
		out[i] = id
	}
	return out, nil
}

func strs(s *wire.Body, loc []any, single, plural string) ([]string, error) {
	return many[string](s, loc, single, plural, "Input should be a valid string")
}

func ints(s *wire.Body, loc []any, single, plural string) ([]int, error) {
	return many[int](s, loc, single, plural, "Input should be a valid integer")
}

func times(s *wire.Body, loc []any, single, plural string) ([]time.Time, error) {
	return many[time.Time](s, loc, single, plural, "Input should be a valid datetime")
}

// renderJSON marshals a record for the wire (nulls omitted by the model's
// omitempty tags).
func renderJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only our own values reach here
	}
	return b
}

// pageWindow renders the windowing of the next page, or nil.
func pageWindow(w *versioned.Windowing) json.RawMessage {
	if w == nil {
		return nil
	}
	return wire.NewObj().Put("next", w.Next).Put("limit", w.Limit).Put("order", w.Order).
		Put("newest", w.Newest).Put("oldest", w.Oldest).Done()
}
