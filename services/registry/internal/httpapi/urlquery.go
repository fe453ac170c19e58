package httpapi

import (
	"encoding/json"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// queryRequest reads the body of a query route. Where the reference also
// takes URL query parameters (§1.4: workflow and environment queries at
// every level, query artifacts, application and evaluator variants), the
// parameters fill what the body leaves out (body fields win, field by
// field inside the filter and the windowing), and the body is read
// leniently: malformed JSON or an ill-typed field makes us ignore the body,
// as the reference does, instead of answering 422. A bad URL parameter is
// still a 422 naming it (loc ["query", name]).
func (g *git) queryRequest(c echo.Context, level, filterKey string) (scope.Scope, *body, versioned.Query, error) {
	if !g.k.urlQuery[level] {
		sc, _, b, err := request(c, false)
		if err != nil {
			return sc, nil, versioned.Query{}, err
		}
		q := g.query(b, filterKey)
		return sc, b, q, errOf(b)
	}
	sc, err := httpx.ProjectScope(c)
	if err != nil {
		return sc, nil, versioned.Query{}, err
	}
	u, err := g.urlBody(c, filterKey)
	if err != nil {
		return sc, nil, versioned.Query{}, err
	}
	if q := g.query(u, filterKey); errOf(u) != nil {
		return sc, nil, q, errOf(u)
	}
	b, err := readBody(c)
	if err != nil {
		// Only malformed JSON is ignored: text that cannot be stored or a
		// body over the limit is refused here as everywhere.
		if errs.KindOf(err) != errs.Invalid {
			return sc, nil, versioned.Query{}, err
		}
		b = &body{m: map[string]json.RawMessage{}, loc: []any{"body"}}
	}
	merged := mergeBodies(b, u, filterKey, "windowing")
	q := g.query(merged, filterKey)
	if errOf(merged) != nil { // an ill-typed body is ignored
		u.err = nil
		q = g.query(u, filterKey)
		return sc, u, q, errOf(u)
	}
	return sc, merged, q, nil
}

// mergeBodies returns b with the keys of u it lacks; for the nested objects
// named by nested, the members are merged the same way.
func mergeBodies(b, u *body, nested ...string) *body {
	out := &body{m: map[string]json.RawMessage{}, loc: b.loc}
	for k, v := range u.m {
		out.m[k] = v
	}
	for k, v := range b.m {
		out.m[k] = v
	}
	for _, k := range nested {
		bv, uv := b.m[k], u.m[k]
		if isNull(bv) || isNull(uv) {
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

// urlBody turns the URL query parameters into the body they stand for:
// <e>_id, <e>_ids, <e>_slug, <e>_slugs become <e>_refs; name, description
// and the JSON strings flags, tags and meta become the filter;
// include_archived; next, newest, oldest, limit and order become the
// windowing. Lists may repeat the parameter or separate values by commas.
func (g *git) urlBody(c echo.Context, filterKey string) (*body, error) {
	qp := c.QueryParams()
	u := &body{m: map[string]json.RawMessage{}, loc: []any{"query"}}
	k := g.k.key
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
			return nil, fieldInvalid("Input should be a valid JSON object", v, "query", name)
		}
		if err := httpx.CheckJSONText([]byte(v), nil, "query", name); err != nil {
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
			return nil, fieldInvalid("Input should be a valid integer", v, "query", "limit")
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
