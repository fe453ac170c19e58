package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fieldErr returns the loc and msg of the first entry of a 422 body.
func fieldErr(t *testing.T, r resp) ([]any, string) {
	t.Helper()
	require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
	var body struct {
		Detail []struct {
			Loc []any  `json:"loc"`
			Msg string `json:"msg"`
		} `json:"detail"`
	}
	require.NoError(t, json.Unmarshal(r.body, &body), string(r.body))
	require.NotEmpty(t, body.Detail, string(r.body))
	return body.Detail[0].Loc, body.Detail[0].Msg
}

// TestTextThePostgresCannotStore sends NUL characters, invalid UTF-8 and
// unpaired surrogates in the places a reader of the issue found them (a
// testset commit message, testset and workflow names, workflow
// parameters) and in the other ways a value reaches the database (tags,
// query parameters, form fields, testcase metadata): each is a 422 naming
// the field. Testcase data is stored as json, which keeps \u0000, so a row
// holding one is accepted and reads back unchanged.
func TestTextThePostgresCannotStore(t *testing.T) {
	s := newServer(t)
	tsID, tsV := newTestset(t, s, "nul")
	wfID, wfV := mkWorkflow(t, s, "workflows", "workflow", "nul-wf")
	_ = wfID

	for _, tc := range []struct {
		name, method, path, body string
		loc                      []any
		msg                      string
	}{
		{"NUL in a testset commit message", "POST", "/testsets/revisions/commit",
			`{"testset_revision":{"testset_id":"` + tsID + `","testset_variant_id":"` + tsV + `","message":"m\u0000","data":{"testcases":[]}}}`,
			[]any{"body", "testset_revision", "message"}, "NUL"},
		{"NUL in a testset name", "POST", "/testsets", `{"testset":{"slug":"n1","name":"a\u0000b"}}`,
			[]any{"body", "testset", "name"}, "NUL"},
		{"NUL in a workflow name", "POST", "/workflows", `{"workflow":{"slug":"n2","name":"\u0000"}}`,
			[]any{"body", "workflow", "name"}, "NUL"},
		{"NUL in workflow parameters", "POST", "/workflows/revisions/commit",
			`{"workflow_revision":{"workflow_variant_id":"` + wfV + `","data":{"uri":"svc:custom:hook:v0","url":"https://h.example.com","parameters":{"prompt":["x","\u0000"]}}}}`,
			[]any{"body", "workflow_revision", "data", "parameters", "prompt", 1.0}, "NUL"},
		{"NUL in a simple testset description", "POST", "/simple/testsets", `{"testset":{"slug":"n3","description":"\u0000","data":{"testcases":[]}}}`,
			[]any{"body", "testset", "description"}, "NUL"},
		{"NUL in a tag key", "POST", "/testsets", `{"testset":{"slug":"n4","tags":{"a\u0000":"b"}}}`,
			[]any{"body", "testset", "tags", "a\x00"}, "NUL"},
		{"invalid UTF-8 in tags", "POST", "/testsets", "{\"testset\":{\"slug\":\"n5\",\"tags\":{\"a\":\"b\xff\"}}}",
			[]any{"body", "testset", "tags", "a"}, "UTF-8"},
		{"unpaired surrogate in meta", "POST", "/testsets", `{"testset":{"slug":"n6","meta":{"a":"\udc00"}}}`,
			[]any{"body", "testset", "meta", "a"}, "surrogate"},
		{"NUL in a testcase's meta", "POST", "/testsets/revisions/commit",
			`{"testset_revision":{"testset_id":"` + tsID + `","testset_variant_id":"` + tsV + `","data":{"testcases":[{"data":{"q":"1"},"meta":{"m":"\u0000"}}]}}}`,
			[]any{"body", "testset_revision", "data", "testcases", 0.0, "meta", "m"}, "NUL"},
		{"NUL in a query filter", "POST", "/testsets/query", `{"testset":{"name":"\u0000"}}`,
			[]any{"body", "testset", "name"}, "NUL"},
		{"NUL in an environment reference", "POST", "/environments", `{"environment":{"slug":"env-n","description":"ok","meta":{"x":{"y":"\u0000"}}}}`,
			[]any{"body", "environment", "meta", "x", "y"}, "NUL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loc, msg := fieldErr(t, s.do(t, tc.method, tc.path, tc.body))
			assert.Equal(t, tc.loc, loc)
			assert.Contains(t, msg, tc.msg)
		})
	}

	t.Run("query parameters", func(t *testing.T) {
		for name, q := range map[string]string{"name": "%00", "flags": url.QueryEscape(`{"a":"\u0000"}`), "description": "%FF"} {
			loc, _ := fieldErr(t, s.do(t, "POST", "/workflows/query?"+name+"="+q, nil))
			assert.Equal(t, []any{"query", name}, loc[:2], name)
		}
	})
	t.Run("form fields of an upload", func(t *testing.T) {
		for field, v := range map[string]string{"testset_name": "a\x00", "testset_description": "\xff", "testset_tags": `{"a":"\u0000"}`, "testset_slug": "a\x00"} {
			r := s.upload(t, "/simple/testsets/upload", map[string]string{field: v}, "rows.csv", []byte("q\n1\n"))
			loc, _ := fieldErr(t, r)
			assert.Equal(t, []any{"body", field}, loc[:2], field)
		}
	})
	t.Run("metadata cells of an uploaded file", func(t *testing.T) {
		r := s.upload(t, "/simple/testsets/upload", nil, "rows.json", []byte(`[{"q":"1"},{"q":"2","__meta__":{"m":"\u0000"}}]`))
		loc, _ := fieldErr(t, r)
		assert.Equal(t, []any{"body", "file", 1.0, "meta", "m"}, loc)
	})
	t.Run("testcase data keeps NUL", func(t *testing.T) {
		r := s.do(t, "POST", "/testsets/revisions/commit",
			`{"testset_revision":{"testset_id":"`+tsID+`","testset_variant_id":"`+tsV+`","data":{"testcases":[{"data":{"q\u0000":"a\u0000b","n":{"x":["\u0000"]}}}]}}}`)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		rev := obj(t, r.json(t), "testset_revision")
		got := s.ok(t, "GET", "/testsets/revisions/"+str(rev["id"])+"?include_testcases=true", nil)
		tcs := list(t, obj(t, got, "testset_revision", "data"), "testcases")
		require.Len(t, tcs, 1)
		assert.Equal(t, map[string]any{"q\x00": "a\x00b", "n": map[string]any{"x": []any{"\x00"}}}, tcs[0].(map[string]any)["data"])
		csv := s.do(t, "POST", "/testsets/revisions/"+str(rev["id"])+"/download?file_type=csv", nil)
		require.Equal(t, http.StatusOK, csv.status, string(csv.body))
		assert.Contains(t, string(csv.body), "a\x00b")
	})
}

// TestTextLimits sends text over the registry's documented limits: each is
// a 422 naming the field and the limit, before the database (a 9,000
// character slug was a 500, "index row requires 24056 bytes").
func TestTextLimits(t *testing.T) {
	s := newServer(t)
	tsID, tsV := newTestset(t, s, "lim")
	long := func(n int) string { return strings.Repeat("é", n) }
	var random strings.Builder
	for random.Len() < 9000 { // incompressible, as in the report
		random.WriteString(strings.ReplaceAll(uuid.NewString(), "-", ""))
	}
	for _, tc := range []struct {
		name, path string
		body       m
		loc        []any
		limit      string
	}{
		{"9,000-character slug", "/testsets", m{"testset": m{"slug": random.String()}}, []any{"body", "testset", "slug"}, "255"},
		{"256-character variant slug", "/testsets/variants", m{"testset_variant": m{"slug": strings.Repeat("s", 256), "testset_id": tsID}}, []any{"body", "testset_variant", "slug"}, "255"},
		{"513-character name", "/workflows", m{"workflow": m{"slug": "n", "name": long(513)}}, []any{"body", "workflow", "name"}, "512"},
		{"description over 64Ki characters", "/testsets", m{"testset": m{"slug": "d", "description": long(65537)}}, []any{"body", "testset", "description"}, "65536"},
		{"commit message over 64Ki characters", "/testsets/revisions/commit", m{"testset_revision": m{"testset_id": tsID, "testset_variant_id": tsV, "message": long(65537), "data": m{"testcases": []any{}}}},
			[]any{"body", "testset_revision", "message"}, "65536"},
		{"tags over 64 KiB", "/testsets", m{"testset": m{"slug": "t", "tags": m{"a": strings.Repeat("t", 70000)}}}, []any{"body", "testset", "tags"}, "65536"},
		{"meta over 1 MiB", "/queries", m{"query": m{"slug": "q", "meta": m{"a": strings.Repeat("m", 1<<20)}}}, []any{"body", "query", "meta"}, "1048576"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loc, msg := fieldErr(t, s.do(t, "POST", tc.path, tc.body))
			assert.Equal(t, tc.loc, loc)
			assert.Contains(t, msg, tc.limit)
		})
	}
	t.Run("at the limits", func(t *testing.T) {
		s.ok(t, "POST", "/testsets", m{"testset": m{"slug": strings.Repeat("s", 255), "name": long(512), "description": long(65536)}})
	})
	t.Run("a slug no row can have is refused in a reference too", func(t *testing.T) {
		loc, _ := fieldErr(t, s.do(t, "POST", "/testsets/revisions/retrieve", m{"testset_ref": m{"slug": random.String()}}))
		assert.Equal(t, []any{"body", "testset_ref", "slug"}, loc)
	})
}
