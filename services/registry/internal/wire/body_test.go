package wire

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
)

// fieldErr is the one field error err carries: its location and message.
func fieldErr(t *testing.T, err error) ([]any, string) {
	t.Helper()
	require.Error(t, err)
	e := errs.From(err)
	require.Equal(t, errs.Unprocessable, e.Kind, "%v", err)
	fe, ok := e.Detail.([]errs.FieldError)
	require.True(t, ok, "%v", err)
	require.Len(t, fe, 1)
	return fe[0].Loc, fe[0].Msg
}

func read(t *testing.T, s string) *Body {
	t.Helper()
	b, err := ReadBody(strings.NewReader(s))
	require.NoError(t, err)
	return b
}

func TestBodyFieldErrorsNameTheField(t *testing.T) {
	cases := []struct {
		name, body string
		read       func(b *Body)
		loc        []any
		msg        string
	}{
		{"string", `{"name": 3}`, func(b *Body) { b.Str("name") }, []any{"body", "name"}, "Input should be a valid string"},
		{"uuid", `{"id": "x"}`, func(b *Body) { b.ID("id") }, []any{"body", "id"}, "Input should be a valid UUID"},
		{"alias key", `{"artifact_id": "x"}`, func(b *Body) { b.ID("testset_id", "artifact_id") }, []any{"body", "artifact_id"}, "Input should be a valid UUID"},
		{"bool", `{"f": "yes"}`, func(b *Body) { b.Bool(false, "f") }, []any{"body", "f"}, "Input should be a valid boolean"},
		{"object", `{"meta": []}`, func(b *Body) { b.Object("meta") }, []any{"body", "meta"}, "Input should be a valid dictionary"},
		{"tags", `{"tags": {"a": 1}}`, func(b *Body) { b.Tags("tags") }, []any{"body", "tags"}, "Tag values must be booleans, strings or nested objects of them"},
		{"slug", `{"slug": "a/b"}`, func(b *Body) { b.Slug("slug") }, []any{"body", "slug"}, "'slug' must be URL-safe."},
		{"slug too long", `{"slug": "` + strings.Repeat("a", MaxSlugLen+1) + `"}`, func(b *Body) { b.Slug("slug") }, []any{"body", "slug"}, "String should have at most 255 characters"},
		{"nested", `{"testset": {"name": false}}`, func(b *Body) { s := b.Require("testset"); s.Str("name"); b.Adopt(s) }, []any{"body", "testset", "name"}, "Input should be a valid string"},
		{"required", `{}`, func(b *Body) { b.Require("testset") }, []any{"body", "testset"}, "Field required"},
		{"list item", `{"refs": [{"id": "x"}]}`, func(b *Body) { b.Refs("refs") }, []any{"body", "refs", 0, "id"}, "Input should be a valid UUID"},
		{"windowing order", `{"windowing": {"order": "up"}}`, func(b *Body) { b.Windowing() }, []any{"body", "windowing", "order"}, "Input should be 'ascending' or 'descending'"},
		{"revision-only filter", `{"message": "m"}`, func(b *Body) { b.Filter(false) }, []any{"body", "message"}, "Filters revisions only: artifacts and variants have no message"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := read(t, tc.body)
			tc.read(b)
			loc, msg := fieldErr(t, b.Err())
			assert.Equal(t, tc.loc, loc)
			assert.Equal(t, tc.msg, msg)
		})
	}
}

func TestBodyKeepsTheFirstError(t *testing.T) {
	b := read(t, `{"a": 1, "b": 2}`)
	b.Str("a")
	b.Str("b")
	loc, _ := fieldErr(t, ErrOf(nil, b))
	assert.Equal(t, []any{"body", "a"}, loc)
}

func TestReadBody(t *testing.T) {
	b := read(t, "  ")
	assert.Empty(t, b.Map(), "an empty body is {}")
	b = read(t, "null")
	assert.NotNil(t, b.Map())
	assert.Nil(t, b.Str("absent"))
	assert.True(t, b.Has("x") == false)

	_, err := ReadBody(strings.NewReader(`{"a":`))
	assert.Equal(t, errs.Invalid, errs.KindOf(err))

	_, err = ReadBody(strings.NewReader(`{"name": "a\u0000b"}`))
	loc, _ := fieldErr(t, err)
	assert.Equal(t, []any{"body", "name"}, loc, "NUL cannot be stored")

	_, err = ReadBody(strings.NewReader(`{"testcases": [{"data": "a\u0000b"}]}`))
	assert.NoError(t, err, "testcase data is stored as json, which keeps NUL")
}

func TestQueryBodyAndMerge(t *testing.T) {
	qp := url.Values{"testset_ids": {"a,b"}, "name": {"n"}, "limit": {"2"}, "include_archived": {"yes"}}
	u, err := QueryBody(qp, "testset", "testset")
	require.NoError(t, err)
	assert.JSONEq(t, `[{"id":"a"},{"id":"b"}]`, string(u.Value("testset_refs")))
	assert.JSONEq(t, `{"name":"n"}`, string(u.Value("testset")))
	assert.True(t, u.Bool(false, "include_archived"))

	b := read(t, `{"windowing": {"order": "descending"}, "testset": {"name": "body"}}`)
	m := Merge(b, u, "testset", "windowing")
	assert.JSONEq(t, `{"order":"descending","limit":2}`, string(m.Value("windowing")))
	assert.JSONEq(t, `{"name":"body"}`, string(m.Value("testset")), "the body wins")

	_, err = QueryBody(url.Values{"limit": {"x"}}, "testset", "testset")
	loc, _ := fieldErr(t, err)
	assert.Equal(t, []any{"query", "limit"}, loc)
}

func TestFormField(t *testing.T) {
	loc, msg := fieldErr(t, FormField("testset_name", strings.Repeat("x", MaxNameLen+1)))
	assert.Equal(t, []any{"body", "testset_name"}, loc)
	assert.Equal(t, "String should have at most 512 characters", msg)
	assert.NoError(t, FormField("testset_meta", `{"a": 1}`))
}
