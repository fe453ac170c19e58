package wire

import (
	"encoding/json"
	"io"
	"net/url"
	"strings"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/inputlimits"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// Query reads the query body of entity key's git routes: the artifact,
// variant and revision refs, include_archived, the windowing and the
// filter object under filterKey (revision-only filters are refused unless
// filterKey is key_revision).
func (b *Body) Query(key, filterKey string) versioned.Query {
	q := versioned.Query{
		ArtifactRefs:    b.Refs(key + "_refs"),
		VariantRefs:     b.Refs(key + "_variant_refs"),
		RevisionRefs:    b.Refs(key + "_revision_refs"),
		IncludeArchived: b.Bool(false, "include_archived"),
		Windowing:       b.Windowing(),
	}
	if f := b.Sub(filterKey); f != nil {
		q.Filter = f.Filter(filterKey == key+"_revision")
		b.Adopt(f)
	}
	return q
}

// ReadQuery reads the request of a query route of entity key: the body r
// and, when qp is not nil, the URL query parameters. Where the compatible
// platform also takes URL parameters (workflow and environment queries at
// every level, query artifacts, application and evaluator variants), they
// fill what the body leaves out (body fields win, field by field inside
// the filter and the windowing), and the body is read leniently:
// malformed JSON or an ill-typed field makes us ignore the body, as the
// compatible platform does, instead of answering 422. A bad URL parameter is still
// a 422 naming it (loc ["query", name]).
func ReadQuery(r io.Reader, qp url.Values, key, filterKey string) (*Body, versioned.Query, error) {
	if qp == nil {
		b, err := ReadBody(r)
		if err != nil {
			return nil, versioned.Query{}, err
		}
		q := b.Query(key, filterKey)
		return b, q, ErrOf(b)
	}
	u, err := QueryBody(qp, key, filterKey)
	if err != nil {
		return nil, versioned.Query{}, err
	}
	if q := u.Query(key, filterKey); ErrOf(u) != nil {
		return nil, q, ErrOf(u)
	}
	b, err := ReadBody(r)
	if err != nil {
		// Only malformed JSON is ignored: text that cannot be stored or a
		// body over the limit is refused here as everywhere.
		if errs.KindOf(err) != errs.Invalid {
			return nil, versioned.Query{}, err
		}
		b = NewBody("body")
	}
	merged := Merge(b, u, filterKey, "windowing")
	q := merged.Query(key, filterKey)
	if ErrOf(merged) != nil { // an ill-typed body is ignored
		q = u.Query(key, filterKey)
		return u, q, ErrOf(u)
	}
	return merged, q, nil
}

// Merge returns b with the keys of u it lacks; for the nested objects
// named by nested, the members are merged the same way (b's win). The
// result's fields are located as b's.
func Merge(b, u *Body, nested ...string) *Body {
	out := &Body{m: map[string]json.RawMessage{}, loc: b.loc}
	for k, v := range u.m {
		out.m[k] = v
	}
	for k, v := range b.m {
		out.m[k] = v
	}
	for _, k := range nested {
		bv, uv := b.m[k], u.m[k]
		if IsNull(bv) || IsNull(uv) {
			continue
		}
		var bm, um map[string]json.RawMessage
		if json.Unmarshal(bv, &bm) != nil || json.Unmarshal(uv, &um) != nil {
			continue // the body's own value stands (and may be refused)
		}
		for kk, vv := range bm {
			um[kk] = vv
		}
		out.m[k], _ = json.Marshal(um)
	}
	return out
}

// QueryBody turns the URL query parameters of a query route of entity k
// into the body they stand for (fields located under "query"): <k>_id,
// <k>_ids, <k>_slug, <k>_slugs become <k>_refs; name, description and the
// JSON strings flags, tags and meta become the filter under filterKey;
// include_archived; next, newest, oldest, limit and order become the
// windowing. Lists may repeat the parameter or separate values by commas.
// A flags/tags/meta or limit that is not JSON is a 422 naming it.
func QueryBody(qp url.Values, k, filterKey string) (*Body, error) {
	u := NewBody("query")
	var refs []map[string]string
	for _, name := range []string{k + "_id", k + "_ids"} {
		for _, v := range splitList(qp[name]) {
			refs = append(refs, map[string]string{"id": v})
		}
	}
	for _, name := range []string{k + "_slug", k + "_slugs"} {
		for _, v := range splitList(qp[name]) {
			refs = append(refs, map[string]string{"slug": v})
		}
	}
	if refs != nil {
		u.m[k+"_refs"], _ = json.Marshal(refs)
	}
	filter := map[string]json.RawMessage{}
	for _, name := range []string{"name", "description"} {
		if v := qp.Get(name); v != "" {
			filter[name], _ = json.Marshal(v)
		}
	}
	for _, name := range []string{"flags", "tags", "meta"} {
		v := qp.Get(name)
		if v == "" {
			continue
		}
		if !json.Valid([]byte(v)) {
			return nil, FieldInvalid("Input should be a valid JSON object", v, "query", name)
		}
		if err := inputlimits.CheckJSONText([]byte(v), nil, "query", name); err != nil {
			return nil, err
		}
		filter[name] = json.RawMessage(v)
	}
	if len(filter) > 0 {
		u.m[filterKey], _ = json.Marshal(filter)
	}
	if v := qp.Get("include_archived"); v != "" {
		u.m["include_archived"] = json.RawMessage(boolJSON(v))
	}
	win := map[string]json.RawMessage{}
	for _, name := range []string{"next", "newest", "oldest", "order"} {
		if v := qp.Get(name); v != "" {
			win[name], _ = json.Marshal(v)
		}
	}
	if v := qp.Get("limit"); v != "" {
		if !json.Valid([]byte(v)) {
			return nil, FieldInvalid("Input should be a valid integer", v, "query", "limit")
		}
		win["limit"] = json.RawMessage(v)
	}
	if len(win) > 0 {
		u.m["windowing"], _ = json.Marshal(win)
	}
	return u, nil
}

func splitList(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// boolJSON maps a query-string boolean to JSON; anything else is passed as
// a string so that the body reader refuses it with a 422.
func boolJSON(v string) string {
	switch strings.ToLower(v) {
	case "true", "1", "yes", "on":
		return "true"
	case "false", "0", "no", "off":
		return "false"
	}
	b, _ := json.Marshal(v)
	return string(b)
}
