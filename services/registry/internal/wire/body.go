// Package wire holds the registry's request and response shapes as the
// compatible platform speaks them, free of any HTTP framework: Body, a bounded JSON
// body (or query string) read field by field whose typed accessors record
// the first error as a 422 naming the field at fault; the query-string
// form of a query body (QueryBody, Merge); Obj, the ordered JSON object
// writer that leaves out nulls; the envelopes every route answers with
// (Envelope, List, NextWindow); and the rendering of the registry's
// records (Entity, AppendTestcase). The transport binds a request to a
// Body and sends what these render.
package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/inputlimits"
	"github.com/assayhq/assay/services/registry/internal/embeds"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// Limits on the text the registry stores (docs/operations.md, input
// limits): strings in characters, JSON objects in bytes of their compact
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

// storedAsJSON exempts testcase data from the text checks of ReadBody:
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

// Body is a JSON object read leniently by key, so that prefixed and generic
// names (testset_id / artifact_id) and run-time keys work; each getter
// records the first type error as a 422 naming the field's location.
type Body struct {
	m   map[string]json.RawMessage
	loc []any
	err error
}

// NewBody returns an empty Body whose field errors are located under loc
// ("body", or "query" for URL parameters).
func NewBody(loc ...any) *Body {
	return &Body{m: map[string]json.RawMessage{}, loc: loc}
}

// ReadBody decodes a request body as a JSON object; an empty body is {}.
// A string PostgreSQL cannot store (NUL, invalid UTF-8, a lone surrogate)
// anywhere but in testcase data is a 422 naming it, so no handler needs to
// look for them. The reader is expected to be bounded by the transport
// (the body limit is the server's).
func ReadBody(r io.Reader) (*Body, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	b := NewBody("body")
	if len(bytes.TrimSpace(raw)) == 0 {
		return b, nil
	}
	if err := json.Unmarshal(raw, &b.m); err != nil {
		return nil, errs.WithDetail(errs.Invalid, "request.malformed_body", err.Error(), "malformed JSON body: "+err.Error())
	}
	if b.m == nil { // a literal null
		b.m = map[string]json.RawMessage{}
	}
	if err := inputlimits.CheckJSONText(raw, storedAsJSON, "body"); err != nil {
		return nil, err
	}
	if err := inputlimits.CheckJSONLimits(raw, "body"); err != nil {
		return nil, err
	}
	return b, nil
}

// Value is the raw value of key as sent (nil when absent).
func (b *Body) Value(key string) json.RawMessage { return b.m[key] }

// Map is the object's members as sent; callers must not modify it.
func (b *Body) Map() map[string]json.RawMessage { return b.m }

// Loc is a fresh copy of the location of b's fields ("body", key, ...),
// so a caller may extend it.
func (b *Body) Loc() []any { return append([]any{}, b.loc...) }

// Err is the first field error recorded on b.
func (b *Body) Err() error { return b.err }

// Adopt records sub's first error on b unless b already has one: the
// error of a nested object read through Sub belongs to its parent.
func (b *Body) Adopt(sub *Body) {
	if b.err == nil && sub != nil {
		b.err = sub.err
	}
}

// Fail records a 422 for key with msg, unless b already failed; input is
// echoed back in the error unless nil (an over-long value is not).
func (b *Body) Fail(key string, msg string, input json.RawMessage) {
	if b.err == nil {
		loc := append(append([]any{}, b.loc...), key)
		var in any
		if input != nil { // an over-long value is not echoed back
			in = input
		}
		b.err = errs.Field(msg, in, loc...)
	}
}

// Raw returns the first present, non-null value among keys.
func (b *Body) Raw(keys ...string) (string, json.RawMessage) {
	for _, k := range keys {
		if v, ok := b.m[k]; ok && !IsNull(v) {
			return k, v
		}
	}
	return "", nil
}

// Has reports whether key is present at all, null included.
func (b *Body) Has(key string) bool { _, ok := b.m[key]; return ok }

// IsNull reports whether v is absent or a JSON null.
func IsNull(v json.RawMessage) bool { return len(v) == 0 || string(bytes.TrimSpace(v)) == "null" }

// Decode unmarshals the first present key into dst; false if absent.
func (b *Body) Decode(dst any, msg string, keys ...string) bool {
	k, v := b.Raw(keys...)
	if v == nil {
		return false
	}
	if err := json.Unmarshal(v, dst); err != nil {
		b.Fail(k, msg, v)
		return false
	}
	return true
}

// Str reads a string field, within its length limit (maxLen).
func (b *Body) Str(keys ...string) *string {
	k, v := b.Raw(keys...)
	if v == nil {
		return nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		b.Fail(k, "Input should be a valid string", v)
		return nil
	}
	if utf8.RuneCountInString(s) > maxLen(k) {
		b.Fail(k, tooLongMsg(k), nil)
		return nil
	}
	return &s
}

// ID reads a UUID field.
func (b *Body) ID(keys ...string) *uuid.UUID {
	var s string
	k, v := b.Raw(keys...)
	if v == nil {
		return nil
	}
	if json.Unmarshal(v, &s) == nil {
		if id, err := uuid.Parse(s); err == nil {
			return &id
		}
	}
	b.Fail(k, "Input should be a valid UUID", v)
	return nil
}

// Bool reads a boolean field; def when absent or ill-typed.
func (b *Body) Bool(def bool, keys ...string) bool {
	var v bool
	if b.Decode(&v, "Input should be a valid boolean", keys...) {
		return v
	}
	return def
}

// Int reads an integer field.
func (b *Body) Int(keys ...string) *int {
	var n int
	if b.Decode(&n, "Input should be a valid integer", keys...) {
		return &n
	}
	return nil
}

// Object returns the value of key if it is a JSON object; other types are
// a 422. Null and absent give nil.
func (b *Body) Object(key string) json.RawMessage {
	v := b.m[key]
	if IsNull(v) {
		return nil
	}
	if bytes.TrimSpace(v)[0] != '{' {
		b.Fail(key, "Input should be a valid dictionary", v)
		return nil
	}
	c := Compact(v)
	if len(c) > maxBytes(key) {
		b.Fail(key, tooLargeMsg(key), nil)
		return nil
	}
	return c
}

// Tags returns the tags object: values are booleans, strings or nested
// objects of the same, never numbers or lists.
func (b *Body) Tags(key string) json.RawMessage {
	v := b.Object(key)
	if v == nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(v, &m)
	if !ValidTags(m) {
		b.Fail(key, "Tag values must be booleans, strings or nested objects of them", v)
		return nil
	}
	return v
}

// ValidTags reports whether m holds only booleans, strings and nested
// objects of them (the shape of tags).
func ValidTags(m map[string]any) bool {
	for _, v := range m {
		switch x := v.(type) {
		case bool, string:
		case map[string]any:
			if !ValidTags(x) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// Sub returns the nested object at key as a body; nil when absent or null.
func (b *Body) Sub(key string) *Body {
	v := b.m[key]
	if IsNull(v) {
		return nil
	}
	s := &Body{loc: append(append([]any{}, b.loc...), key)}
	if err := json.Unmarshal(v, &s.m); err != nil || s.m == nil {
		b.Fail(key, "Input should be a valid dictionary", v)
		return nil
	}
	return s
}

// Require returns a 422 for a missing required object.
func (b *Body) Require(key string) *Body {
	s := b.Sub(key)
	if s == nil && b.err == nil {
		b.err = errs.Field("Field required", nil, append(append([]any{}, b.loc...), key)...)
	}
	return s
}

// ErrOf returns the first error recorded by b or any of subs.
func ErrOf(bs ...*Body) error {
	for _, b := range bs {
		if b != nil && b.err != nil {
			return b.err
		}
	}
	return nil
}

// slugRE is what a slug may be: URL-safe, not starting with a dot.
var slugRE = regexp.MustCompile(`^[a-zA-Z0-9_\-][a-zA-Z0-9_.\-]*$`)

// ValidSlug reports whether s may be a slug.
func ValidSlug(s string) bool { return slugRE.MatchString(s) }

// Slug reads and checks a slug field.
func (b *Body) Slug(key string) *string {
	s := b.Str(key)
	if s != nil && !slugRE.MatchString(*s) {
		b.Fail(key, "'slug' must be URL-safe.", b.m[key])
		return nil
	}
	return s
}

// Ref reads a Reference; unknown keys are ignored, the slug is checked.
func (b *Body) Ref(keys ...string) *versioned.Ref {
	for _, k := range keys {
		s := b.Sub(k)
		if s == nil {
			continue
		}
		r := &versioned.Ref{ID: s.ID("id"), Slug: s.Slug("slug"), Version: s.Str("version")}
		if s.err != nil && b.err == nil {
			b.err = s.err
		}
		return r
	}
	return nil
}

// Refs reads a list of References.
func (b *Body) Refs(key string) []versioned.Ref {
	v := b.m[key]
	if IsNull(v) {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		b.Fail(key, "Input should be a valid list", v)
		return nil
	}
	out := make([]versioned.Ref, 0, len(items))
	for i, it := range items {
		s := &Body{loc: append(append([]any{}, b.loc...), key, i)}
		if err := json.Unmarshal(it, &s.m); err != nil || s.m == nil {
			b.Fail(key, "Input should be a valid dictionary", it)
			return nil
		}
		out = append(out, versioned.Ref{ID: s.ID("id"), Slug: s.Slug("slug"), Version: s.Str("version")})
		if s.err != nil && b.err == nil {
			b.err = s.err
		}
	}
	return out
}

// Windowing reads the windowing object.
func (b *Body) Windowing() *versioned.Windowing {
	s := b.Sub("windowing")
	if s == nil {
		return nil
	}
	w := &versioned.Windowing{Next: s.ID("next"), Limit: s.Int("limit"), Order: s.Str("order"), Interval: s.Int("interval")}
	w.Newest, w.Oldest = s.Time("newest"), s.Time("oldest")
	var rate float64
	if s.Decode(&rate, "Input should be a valid number", "rate") {
		w.Rate = &rate
	}
	if w.Order != nil && *w.Order != "ascending" && *w.Order != "descending" {
		s.Fail("order", "Input should be 'ascending' or 'descending'", s.m["order"])
	}
	if b.err == nil {
		b.err = s.err
	}
	return w
}

// Time reads a datetime field.
func (b *Body) Time(key string) *time.Time {
	var t time.Time
	if b.Decode(&t, "Input should be a valid datetime", key) {
		return &t
	}
	return nil
}

// Header reads name, description, flags, tags and meta.
func (b *Body) Header() versioned.Header {
	return versioned.Header{Name: b.Str("name"), Description: b.Str("description"),
		Flags: b.Object("flags"), Tags: b.Tags("tags"), Meta: b.Object("meta")}
}

// revisionFilters are the filter keys only revisions have columns for.
var revisionFilters = []string{"message", "author", "authors", "date", "dates"}

// Filter reads a query filter object. revisions says whether it filters
// revisions: on artifacts and variants the revision-only keys are refused
// (422 naming the key) rather than reaching the database as columns that
// do not exist there (they were 500s).
func (b *Body) Filter(revisions bool) versioned.Filter {
	f := versioned.Filter{Name: b.Str("name"), Description: b.Str("description"), Slug: b.Str("slug"),
		Flags: b.Object("flags"), Tags: b.Object("tags")}
	b.Decode(&f.Slugs, "Input should be a valid list", "slugs")
	if b.Has("folder_id") {
		f.HasFolder, f.FolderID = true, b.ID("folder_id")
	}
	if !revisions {
		for _, k := range revisionFilters {
			if b.Has(k) {
				b.Fail(k, "Filters revisions only: artifacts and variants have no "+k, nil)
			}
		}
		return f
	}
	f.Message, f.Author = b.Str("message"), b.ID("author")
	b.Decode(&f.Authors, "Input should be a valid list of UUIDs", "authors")
	b.Decode(&f.Dates, "Input should be a valid list of datetimes", "dates")
	f.Date = b.Time("date")
	return f
}

// Compact is v without insignificant space (v itself if it is not JSON).
func Compact(v json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return v
	}
	return buf.Bytes()
}

// FieldMissing is the 422 of a required field absent at loc.
func FieldMissing(loc ...any) error { return errs.Field("Field required", nil, loc...) }

// FieldInvalid is the 422 of a field at loc whose value input is refused with msg.
func FieldInvalid(msg string, input any, loc ...any) error { return errs.Field(msg, input, loc...) }

// FormField applies the text checks and limits of JSON bodies to a form
// field: no NUL or invalid UTF-8, strings within their limits, the JSON objects
// testset_tags and testset_meta within theirs and free of what jsonb
// refuses.
func FormField(name, v string) error {
	if err := inputlimits.CheckText(v, "body", name); err != nil {
		return err
	}
	switch name {
	case "testset_tags", "testset_meta":
		if len(v) > maxBytes(name) {
			return errs.Field(tooLargeMsg(name), nil, "body", name)
		}
		if json.Valid([]byte(v)) {
			if err := inputlimits.CheckJSONText([]byte(v), nil, "body", name); err != nil {
				return err
			}
			return inputlimits.CheckJSONLimits([]byte(v), "body", name)
		}
	default:
		if utf8.RuneCountInString(v) > maxLen(name) {
			return errs.Field(tooLongMsg(name), nil, "body", name)
		}
	}
	return nil
}

// ResolveOptions reads the embed resolution options max_depth,
// max_embeds and error_policy over embeds.Defaults.
func (b *Body) ResolveOptions() (embeds.Options, error) {
	o := embeds.Defaults()
	if n := b.Int("max_depth"); n != nil {
		o.MaxDepth = *n
	}
	if n := b.Int("max_embeds"); n != nil {
		o.MaxEmbeds = *n
	}
	if p := b.Str("error_policy"); p != nil {
		switch *p {
		case embeds.Exception, embeds.Placeholder, embeds.Keep:
			o.Policy = *p
		default:
			b.Fail("error_policy", "Input should be 'exception', 'placeholder' or 'keep'", b.m["error_policy"])
		}
	}
	return o, ErrOf(b)
}
