package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// Limits on the text the registry stores (README, registry configuration,
// "Input limits"): strings in characters, JSON objects in bytes of their compact
// form. They are checked as each field is read, so a value over a limit
// never reaches the database; the slug bound also keeps its unique index
// rows far under PostgreSQL's maximum.
const (
	MaxSlugLen   = 255
	MaxNameLen   = 512
	MaxTextLen   = 65536   // descriptions, commit messages and every other string field
	MaxTagsBytes = 65536   // flags and tags
	MaxMetaBytes = 1 << 20 // meta
)

// maxLen is the limit of the string field key.
func maxLen(key string) int {
	switch key {
	case "slug", "testset_slug":
		return MaxSlugLen
	case "name", "testset_name":
		return MaxNameLen
	}
	return MaxTextLen
}

// maxBytes is the limit of the JSON object field key.
func maxBytes(key string) int {
	if key == "meta" || key == "testset_meta" {
		return MaxMetaBytes
	}
	return MaxTagsBytes
}

func tooLongMsg(key string) string {
	return fmt.Sprintf("String should have at most %d characters", maxLen(key))
}

func tooLargeMsg(key string) string {
	return fmt.Sprintf("Object should have at most %d bytes of JSON", maxBytes(key))
}

// storedAsJSON exempts testcase data from the text checks of readBody:
// rows are stored in a json column, which keeps \u0000, and their
// canonical encoding repairs invalid UTF-8 and lone surrogates, so what a
// client sends there is stored. The row's flags, tags and meta (jsonb) are
// checked.
func storedAsJSON(p []any) bool {
	n := len(p)
	if n < 3 || p[n-1] != "data" {
		return false
	}
	if _, ok := p[n-2].(int); !ok {
		return false
	}
	switch p[n-3] {
	case "testcases":
		return true
	case "add", "replace":
		return n >= 4 && p[n-4] == "rows"
	}
	return false
}

// body is a JSON object read leniently by key, so that prefixed and generic
// names (testset_id / artifact_id) and run-time keys work; each getter
// records the first type error as a 422 naming the field's location.
type body struct {
	m   map[string]json.RawMessage
	loc []any
	err error
}

// readBody decodes the request body as a JSON object; an empty body is {}.
// A string PostgreSQL cannot store (NUL, invalid UTF-8, a lone surrogate)
// anywhere but in testcase data is a 422 naming it, so no handler needs to
// look for them.
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
	if err := httpx.CheckJSONText(raw, storedAsJSON, "body"); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *body) fail(key string, msg string, input json.RawMessage) {
	if b.err == nil {
		loc := append(append([]any{}, b.loc...), key)
		var in any
		if input != nil { // an over-long value is not echoed back
			in = input
		}
		b.err = errs.Field(msg, in, loc...)
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

// str reads a string field, within its length limit (maxLen).
func (b *body) str(keys ...string) *string {
	k, v := b.raw(keys...)
	if v == nil {
		return nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		b.fail(k, "Input should be a valid string", v)
		return nil
	}
	if utf8.RuneCountInString(s) > maxLen(k) {
		b.fail(k, tooLongMsg(k), nil)
		return nil
	}
	return &s
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
	c := compact(v)
	if len(c) > maxBytes(key) {
		b.fail(key, tooLargeMsg(key), nil)
		return nil
	}
	return c
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
func (b *body) ref(keys ...string) *versioned.Ref {
	for _, k := range keys {
		s := b.sub(k)
		if s == nil {
			continue
		}
		r := &versioned.Ref{ID: s.id("id"), Slug: s.slug("slug"), Version: s.str("version")}
		if s.err != nil && b.err == nil {
			b.err = s.err
		}
		return r
	}
	return nil
}

// refs reads a list of References.
func (b *body) refs(key string) []versioned.Ref {
	v := b.m[key]
	if isNull(v) {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		b.fail(key, "Input should be a valid list", v)
		return nil
	}
	out := make([]versioned.Ref, 0, len(items))
	for i, it := range items {
		s := &body{loc: append(append([]any{}, b.loc...), key, i)}
		if err := json.Unmarshal(it, &s.m); err != nil || s.m == nil {
			b.fail(key, "Input should be a valid dictionary", it)
			return nil
		}
		out = append(out, versioned.Ref{ID: s.id("id"), Slug: s.slug("slug"), Version: s.str("version")})
		if s.err != nil && b.err == nil {
			b.err = s.err
		}
	}
	return out
}

// windowing reads the windowing object.
func (b *body) windowing() *versioned.Windowing {
	s := b.sub("windowing")
	if s == nil {
		return nil
	}
	w := &versioned.Windowing{Next: s.id("next"), Limit: s.integer("limit"), Order: s.str("order"), Interval: s.integer("interval")}
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
func (b *body) header() versioned.Header {
	return versioned.Header{Name: b.str("name"), Description: b.str("description"),
		Flags: b.object("flags"), Tags: b.tags("tags"), Meta: b.object("meta")}
}

// revisionFilters are the filter keys only revisions have columns for.
var revisionFilters = []string{"message", "author", "authors", "date", "dates"}

// filter reads a query filter object. revisions says whether it filters
// revisions: on artifacts and variants the revision-only keys are refused
// (422 naming the key) rather than reaching the database as columns that
// do not exist there (they were 500s).
func (b *body) filter(revisions bool) versioned.Filter {
	f := versioned.Filter{Name: b.str("name"), Description: b.str("description"), Slug: b.str("slug"),
		Flags: b.object("flags"), Tags: b.object("tags")}
	b.decode(&f.Slugs, "Input should be a valid list", "slugs")
	if b.has("folder_id") {
		f.HasFolder, f.FolderID = true, b.id("folder_id")
	}
	if !revisions {
		for _, k := range revisionFilters {
			if b.has(k) {
				b.fail(k, "Filters revisions only: artifacts and variants have no "+k, nil)
			}
		}
		return f
	}
	f.Message, f.Author = b.str("message"), b.id("author")
	b.decode(&f.Authors, "Input should be a valid list of UUIDs", "authors")
	b.decode(&f.Dates, "Input should be a valid list of datetimes", "dates")
	f.Date = b.time("date")
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
