package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/registry/internal/registry"
)

// body is a JSON object read leniently by key, so that prefixed and generic
// names (testset_id / artifact_id) and run-time keys work; each getter
// records the first type error as a 422 naming the field's location.
type body struct {
	m   map[string]json.RawMessage
	loc []any
	err error
}

// readBody decodes the request body as a JSON object; an empty body is {}.
func readBody(c echo.Context) (*body, error) {
	raw, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return nil, err
	}
	b := &body{m: map[string]json.RawMessage{}, loc: []any{"body"}}
	if len(bytes.TrimSpace(raw)) == 0 {
		return b, nil
	}
	if err := json.Unmarshal(raw, &b.m); err != nil {
		return nil, errs.WithDetail(errs.Invalid, "request.malformed_body", err.Error(), "malformed JSON body: "+err.Error())
	}
	if b.m == nil { // a literal null
		b.m = map[string]json.RawMessage{}
	}
	return b, nil
}

func (b *body) fail(key string, msg string, input json.RawMessage) {
	if b.err == nil {
		loc := append(append([]any{}, b.loc...), key)
		b.err = errs.Field(msg, json.RawMessage(input), loc...)
	}
}

// raw returns the first present, non-null value among keys.
func (b *body) raw(keys ...string) (string, json.RawMessage) {
	for _, k := range keys {
		if v, ok := b.m[k]; ok && !isNull(v) {
			return k, v
		}
	}
	return "", nil
}

// has reports whether key is present at all, null included.
func (b *body) has(key string) bool { _, ok := b.m[key]; return ok }

func isNull(v json.RawMessage) bool { return len(v) == 0 || string(bytes.TrimSpace(v)) == "null" }

// decode unmarshals the first present key into dst; false if absent.
func (b *body) decode(dst any, msg string, keys ...string) bool {
	k, v := b.raw(keys...)
	if v == nil {
		return false
	}
	if err := json.Unmarshal(v, dst); err != nil {
		b.fail(k, msg, v)
		return false
	}
	return true
}

func (b *body) str(keys ...string) *string {
	var s string
	if b.decode(&s, "Input should be a valid string", keys...) {
		return &s
	}
	return nil
}

func (b *body) id(keys ...string) *uuid.UUID {
	var s string
	k, v := b.raw(keys...)
	if v == nil {
		return nil
	}
	if json.Unmarshal(v, &s) == nil {
		if id, err := uuid.Parse(s); err == nil {
			return &id
		}
	}
	b.fail(k, "Input should be a valid UUID", v)
	return nil
}

func (b *body) boolean(def bool, keys ...string) bool {
	var v bool
	if b.decode(&v, "Input should be a valid boolean", keys...) {
		return v
	}
	return def
}

func (b *body) integer(keys ...string) *int {
	var n int
	if b.decode(&n, "Input should be a valid integer", keys...) {
		return &n
	}
	return nil
}

// object returns the value of key if it is a JSON object; other types are
// a 422. Null and absent give nil.
func (b *body) object(key string) json.RawMessage {
	v := b.m[key]
	if isNull(v) {
		return nil
	}
	if bytes.TrimSpace(v)[0] != '{' {
		b.fail(key, "Input should be a valid dictionary", v)
		return nil
	}
	return compact(v)
}

// tags returns the tags object: values are booleans, strings or nested
// objects of the same, never numbers or lists.
func (b *body) tags(key string) json.RawMessage {
	v := b.object(key)
	if v == nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(v, &m)
	if !validTags(m) {
		b.fail(key, "Tag values must be booleans, strings or nested objects of them", v)
		return nil
	}
	return v
}

func validTags(m map[string]any) bool {
	for _, v := range m {
		switch x := v.(type) {
		case bool, string:
		case map[string]any:
			if !validTags(x) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// sub returns the nested object at key as a body; nil when absent or null.
func (b *body) sub(key string) *body {
	v := b.m[key]
	if isNull(v) {
		return nil
	}
	s := &body{loc: append(append([]any{}, b.loc...), key)}
	if err := json.Unmarshal(v, &s.m); err != nil || s.m == nil {
		b.fail(key, "Input should be a valid dictionary", v)
		return nil
	}
	return s
}

// require returns a 422 for a missing required object.
func (b *body) require(key string) *body {
	s := b.sub(key)
	if s == nil && b.err == nil {
		b.err = errs.Field("Field required", nil, append(append([]any{}, b.loc...), key)...)
	}
	return s
}

// errOf returns the first error recorded by b or any of subs.
func errOf(bs ...*body) error {
	for _, b := range bs {
		if b != nil && b.err != nil {
			return b.err
		}
	}
	return nil
}

var slugRE = regexp.MustCompile(`^[a-zA-Z0-9_\-][a-zA-Z0-9_.\-]*$`)

// slug reads and checks a slug field.
func (b *body) slug(key string) *string {
	s := b.str(key)
	if s != nil && !slugRE.MatchString(*s) {
		b.fail(key, "'slug' must be URL-safe.", b.m[key])
		return nil
	}
	return s
}

// ref reads a Reference; unknown keys are ignored, the slug is checked.
func (b *body) ref(keys ...string) *registry.Ref {
	for _, k := range keys {
		s := b.sub(k)
		if s == nil {
			continue
		}
		r := &registry.Ref{ID: s.id("id"), Slug: s.slug("slug"), Version: s.str("version")}
		if s.err != nil && b.err == nil {
			b.err = s.err
		}
		return r
	}
	return nil
}

// refs reads a list of References.
func (b *body) refs(key string) []registry.Ref {
	v := b.m[key]
	if isNull(v) {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		b.fail(key, "Input should be a valid list", v)
		return nil
	}
	out := make([]registry.Ref, 0, len(items))
	for i, it := range items {
		s := &body{loc: append(append([]any{}, b.loc...), key, i)}
		if err := json.Unmarshal(it, &s.m); err != nil || s.m == nil {
			b.fail(key, "Input should be a valid dictionary", it)
			return nil
		}
		out = append(out, registry.Ref{ID: s.id("id"), Slug: s.slug("slug"), Version: s.str("version")})
		if s.err != nil && b.err == nil {
			b.err = s.err
		}
	}
	return out
}

// windowing reads the windowing object.
func (b *body) windowing() *registry.Windowing {
	s := b.sub("windowing")
	if s == nil {
		return nil
	}
	w := &registry.Windowing{Next: s.id("next"), Limit: s.integer("limit"), Order: s.str("order"), Interval: s.integer("interval")}
	w.Newest, w.Oldest = s.time("newest"), s.time("oldest")
	var rate float64
	if s.decode(&rate, "Input should be a valid number", "rate") {
		w.Rate = &rate
	}
	if w.Order != nil && *w.Order != "ascending" && *w.Order != "descending" {
		s.fail("order", "Input should be 'ascending' or 'descending'", s.m["order"])
	}
	if b.err == nil {
		b.err = s.err
	}
	return w
}

func (b *body) time(key string) *time.Time {
	var t time.Time
	if b.decode(&t, "Input should be a valid datetime", key) {
		return &t
	}
	return nil
}

// header reads name, description, flags, tags and meta.
func (b *body) header() registry.Header {
	return registry.Header{Name: b.str("name"), Description: b.str("description"),
		Flags: b.object("flags"), Tags: b.tags("tags"), Meta: b.object("meta")}
}

// filter reads a query filter object.
func (b *body) filter() registry.Filter {
	f := registry.Filter{Name: b.str("name"), Description: b.str("description"), Slug: b.str("slug"),
		Flags: b.object("flags"), Tags: b.object("tags"), Message: b.str("message"), Author: b.id("author")}
	b.decode(&f.Slugs, "Input should be a valid list", "slugs")
	b.decode(&f.Authors, "Input should be a valid list of UUIDs", "authors")
	b.decode(&f.Dates, "Input should be a valid list of datetimes", "dates")
	f.Date = b.time("date")
	if b.has("folder_id") {
		f.HasFolder, f.FolderID = true, b.id("folder_id")
	}
	return f
}

func compact(v json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return v
	}
	return buf.Bytes()
}

func fieldMissing(loc ...any) error { return errs.Field("Field required", nil, loc...) }

func fieldInvalid(msg string, input any, loc ...any) error { return errs.Field(msg, input, loc...) }
