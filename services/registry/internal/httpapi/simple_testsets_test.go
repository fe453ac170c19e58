package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/services/registry/internal/tcfile"
)

// TestWorkedExample is testcases.TestWorkedExample end to end: two identical rows through
// the simple create of a testset with a forced id.
func TestWorkedExample(t *testing.T) {
	s := newServer(t)
	row := map[string]any{"question": "2+2?", "answer": "4"}
	out := s.ok(t, "POST", "/simple/testsets/?testset_id=0190f0a0-0000-7000-8000-000000000001", map[string]any{"testset": map[string]any{
		"slug": "worked", "name": "Worked", "data": map[string]any{"testcases": []any{map[string]any{"data": row}, map[string]any{"data": row}}}}})
	ts := obj(t, out, "testset")
	data := obj(t, ts, "data")
	assert.Equal(t, []any{"3255efb0-0544-5055-81c0-9bae89a1c912", "e5dcf362-5485-5bed-bb1f-2511098d4a8e"}, list(t, data, "testcase_ids"))
	var dedup []any
	for _, tc := range list(t, data, "testcases") {
		dedup = append(dedup, obj(t, tc.(map[string]any), "data")["testcase_dedup_id"])
	}
	assert.Equal(t, []any{"048fb38354ab", "420fa02bd3db"}, dedup)
}

func TestSimpleTestsets(t *testing.T) {
	s := newServer(t)
	rows := func(vals ...string) []any {
		out := []any{}
		for _, v := range vals {
			out = append(out, map[string]any{"data": map[string]any{"input": v, "expected": strings.ToUpper(v)}})
		}
		return out
	}
	created := obj(t, s.ok(t, "POST", "/simple/testsets/", map[string]any{"testset": map[string]any{
		"slug": "simple", "name": "Simple", "tags": map[string]any{"k": "v"}, "data": map[string]any{"testcases": rows("a", "b", "a")}}}), "testset")
	id := str(created["id"])
	assert.Len(t, list(t, obj(t, created, "data"), "testcases"), 3, "identical rows stay distinct through their dedup ids")
	ids := list(t, obj(t, created, "data"), "testcase_ids")
	assert.NotEqual(t, ids[0], ids[2])

	log := s.ok(t, "POST", "/testsets/revisions/log", map[string]any{"testset_revisions": map[string]any{"testset_id": id}})
	revs := list(t, log, "testset_revisions")
	require.Len(t, revs, 2, "a simple create makes two commits")
	assert.Equal(t, created["revision_id"], revs[0].(map[string]any)["id"])
	assert.Equal(t, "Initial commit", revs[1].(map[string]any)["message"])

	got := obj(t, s.ok(t, "GET", "/simple/testsets/"+id, nil), "testset")
	assert.Equal(t, ids, list(t, obj(t, got, "data"), "testcase_ids"))
	assert.Equal(t, map[string]any{"count": float64(0)}, s.ok(t, "GET", "/simple/testsets/0190f0a0-0000-7000-8000-00000000ffff", nil))

	t.Run("edit without changes commits nothing", func(t *testing.T) {
		out := obj(t, s.ok(t, "PUT", "/simple/testsets/"+id, map[string]any{"testset": map[string]any{
			"id": id, "name": "Simple", "tags": map[string]any{"k": "v"}, "data": map[string]any{"testcases": rows("a", "b", "a")}}}), "testset")
		assert.Equal(t, created["revision_id"], out["revision_id"])
	})
	t.Run("edit with new rows commits once", func(t *testing.T) {
		out := obj(t, s.ok(t, "PUT", "/simple/testsets/"+id, map[string]any{"testset": map[string]any{
			"id": id, "name": "Simple", "tags": map[string]any{"k": "v"}, "data": map[string]any{"testcases": rows("a", "c")}}}), "testset")
		assert.NotEqual(t, created["revision_id"], out["revision_id"])
		assert.Len(t, list(t, obj(t, out, "data"), "testcases"), 2)
	})
	t.Run("edit errors", func(t *testing.T) {
		r := s.do(t, "PUT", "/simple/testsets/"+id, map[string]any{"testset": map[string]any{"id": "0190f0a0-0000-7000-8000-00000000ffff"}})
		require.Equal(t, http.StatusBadRequest, r.status)
		missing := "0190f0a0-0000-7000-8000-00000000fffe"
		r = s.do(t, "PUT", "/simple/testsets/"+missing, map[string]any{"testset": map[string]any{"id": missing}})
		require.Equal(t, http.StatusNotFound, r.status)
	})
	t.Run("archive, query, unarchive", func(t *testing.T) {
		out := obj(t, s.ok(t, "POST", "/simple/testsets/"+id+"/archive", nil), "testset")
		assert.Contains(t, out, "deleted_at")
		assert.NotContains(t, out, "data")
		assert.EqualValues(t, 0, s.ok(t, "POST", "/simple/testsets/query", map[string]any{})["count"])
		assert.EqualValues(t, 1, s.ok(t, "POST", "/simple/testsets/query", map[string]any{"include_archived": true})["count"])
		s.ok(t, "POST", "/simple/testsets/"+id+"/unarchive", nil)
		q := s.ok(t, "POST", "/simple/testsets/query", map[string]any{"testset": map[string]any{"tags": map[string]any{"k": "v"}}})
		require.EqualValues(t, 1, q["count"])
		assert.Len(t, list(t, obj(t, list(t, q, "testsets")[0].(map[string]any), "data"), "testcases"), 2)
	})
	t.Run("a failing create writes nothing", func(t *testing.T) {
		r := s.do(t, "POST", "/simple/testsets/", map[string]any{"testset": map[string]any{"slug": "simple", "data": map[string]any{"testcases": rows("x")}}})
		require.Equal(t, http.StatusConflict, r.status)
		r = s.do(t, "POST", "/simple/testsets/", map[string]any{"testset": map[string]any{"slug": "bad-row", "data": map[string]any{"testcases": []any{map[string]any{"data": "not an object"}}}}})
		require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
		assert.EqualValues(t, 0, s.ok(t, "POST", "/testsets/query", map[string]any{"testset": map[string]any{"slug": "bad-row"}})["count"])
	})
}

func TestFiles(t *testing.T) {
	s := newServer(t, tcfile.Limits{MaxRows: 50, MaxBytes: 4096})
	csv := "\ufeffquestion,answer,__dedup_id__\nwhat is 1+1?,2,d1\n\"a, quoted\",\"multi\nline\",\n"
	r := s.upload(t, "/simple/testsets/upload", map[string]string{"testset_name": "Uploaded", "testset_tags": `{"src":"csv"}`}, "qa.csv", []byte(csv))
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	ts := obj(t, r.json(t), "testset")
	id := str(ts["id"])
	assert.Equal(t, "uploaded", ts["slug"], "the slug is made from the name")
	tcs := list(t, obj(t, ts, "data"), "testcases")
	require.Len(t, tcs, 2)
	row0 := obj(t, tcs[0].(map[string]any), "data")
	assert.Equal(t, map[string]any{"question": "what is 1+1?", "answer": "2", "testcase_dedup_id": "d1"}, row0, "every cell a string; __dedup_id__ normalised")
	assert.Equal(t, "multi\nline", obj(t, tcs[1].(map[string]any), "data")["answer"])

	t.Run("download as CSV and JSON", func(t *testing.T) {
		r := s.do(t, "POST", "/simple/testsets/"+id+"/download?file_type=csv&file_name=export.csv&include_ids=true", nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		assert.Equal(t, `attachment; filename="export.csv"`, r.header.Get("Content-Disposition"))
		// The upload's column order, as in the JSON download; __id__ after
		// the data columns.
		assert.True(t, strings.HasPrefix(string(r.body), "question,answer,__dedup_id__,__id__\n"), string(r.body))
		assert.NotContains(t, string(r.body), "__flags__", "empty metadata columns are dropped")

		r = s.do(t, "POST", "/simple/testsets/"+id+"/download?file_type=json&include_ids=1", nil)
		require.Equal(t, http.StatusOK, r.status)
		assert.Equal(t, `attachment; filename="testset_`+id+`.json"`, r.header.Get("Content-Disposition"))
		var items []map[string]any
		require.NoError(t, json.Unmarshal(r.body, &items))
		require.Len(t, items, 2)
		assert.Equal(t, "d1", items[0]["__dedup_id__"])
		assert.Equal(t, tcs[0].(map[string]any)["id"], items[0]["__id__"])

		r = s.do(t, "POST", "/simple/testsets/"+id+"/download", nil)
		require.Equal(t, http.StatusBadRequest, r.status, "file_type is required here")
		r = s.do(t, "POST", "/simple/testsets/0190f0a0-0000-7000-8000-00000000ffff/download?file_type=csv", nil)
		require.Equal(t, http.StatusNotFound, r.status)
	})

	t.Run("a JSON upload onto the revision commits on its variant", func(t *testing.T) {
		rev := str(ts["revision_id"])
		js := `[{"question":"q1","answer":1.0,"__tags__":{"t":"x"},"__meta__":{"m":1}},{"question":"q2","answer":[1,2]}]`
		r := s.upload(t, "/testsets/revisions/"+rev+"/upload", map[string]string{"file_type": "json"}, "rows.json", []byte(js))
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		out := obj(t, r.json(t), "testset_revision")
		tcs := list(t, obj(t, out, "data"), "testcases")
		require.Len(t, tcs, 2)
		assert.Equal(t, map[string]any{"t": "x"}, tcs[0].(map[string]any)["tags"])
		assert.Equal(t, map[string]any{"m": float64(1)}, tcs[0].(map[string]any)["meta"])

		d := s.do(t, "POST", "/testsets/revisions/"+str(out["id"])+"/download?file_type=csv", nil)
		require.Equal(t, http.StatusOK, d.status)
		assert.Contains(t, string(d.body), "__tags__")
		assert.Contains(t, string(d.body), `"[1,2]"`)
		r = s.upload(t, "/testsets/revisions/0190f0a0-0000-7000-8000-00000000ffff/upload", nil, "rows.csv", []byte("a\n1\n"))
		require.Equal(t, http.StatusNotFound, r.status)
	})

	t.Run("malformed files are 400 naming the place and commit nothing", func(t *testing.T) {
		before := s.ok(t, "POST", "/testsets/revisions/log", map[string]any{"testset_revisions": map[string]any{"testset_id": id}})["count"]
		bad := []struct{ name, file, want string }{
			{"ragged.csv", "a,b\n1,2\n1,2,3\n", "line 3"},
			{"utf8.csv", "a\n\xff\xfe\n", "line 2"},
			{"quote.csv", "a,b\n1,2\n3,\"x\n4,5\n", "line 3: the quoted cell in column 2 is never closed"},
			{"root.json", `{"a":1}`, "array"},
			{"row.json", `[{"a":1}, 7]`, "1"},
		}
		for _, b := range bad {
			r := s.upload(t, "/simple/testsets/"+id+"/upload", nil, b.name, []byte(b.file))
			require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", b.name, r.body)
			assert.Contains(t, string(r.body), b.want, b.name)
		}
		after := s.ok(t, "POST", "/testsets/revisions/log", map[string]any{"testset_revisions": map[string]any{"testset_id": id}})["count"]
		assert.Equal(t, before, after)
	})

	t.Run("over a limit is a 413 naming it", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("n\n")
		for i := range 51 {
			fmt.Fprintf(&b, "%d\n", i)
		}
		r := s.upload(t, "/simple/testsets/upload", nil, "many.csv", []byte(b.String()))
		require.Equal(t, http.StatusRequestEntityTooLarge, r.status, string(r.body))
		assert.Contains(t, string(r.body), "50")
		r = s.upload(t, "/simple/testsets/upload", nil, "big.csv", []byte("n\n"+strings.Repeat("x", 5000)+"\n"))
		require.Equal(t, http.StatusRequestEntityTooLarge, r.status, string(r.body))
		assert.Contains(t, string(r.body), "4096")
	})

	t.Run("simple upload edit keeps the stored header", func(t *testing.T) {
		r := s.upload(t, "/simple/testsets/"+id+"/upload", nil, "new.csv", []byte("question\nq9\n"))
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		out := obj(t, r.json(t), "testset")
		assert.Equal(t, "Uploaded", out["name"])
		assert.Equal(t, map[string]any{"src": "csv"}, out["tags"])
		r = s.upload(t, "/simple/testsets/upload", map[string]string{"testset_meta": "{not json"}, "x.csv", []byte("a\n1\n"))
		require.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, string(r.body), "testset_meta")
	})
}

// TestRevisionsAreImmutable commits later revisions through every write
// path and checks that the first revision reads back identically.
func TestRevisionsAreImmutable(t *testing.T) {
	s := newServer(t)
	out := obj(t, s.ok(t, "POST", "/simple/testsets/", `{"testset": {"slug": "imm", "data": {"testcases": [
		{"data": {"x": 1.0, "y": "é"}}, {"data": {"x": 2}}, {"data": {"x": 1.0, "y": "é"}}]}}}`), "testset")
	id, first := str(out["id"]), str(out["revision_id"])
	read := func() []byte {
		r := s.do(t, "GET", "/testsets/revisions/"+first, nil)
		require.Equal(t, http.StatusOK, r.status)
		var m map[string]any
		require.NoError(t, json.Unmarshal(r.body, &m))
		raw, _ := json.Marshal(obj(t, m, "testset_revision", "data"))
		return raw
	}
	before := read()

	s.ok(t, "PUT", "/simple/testsets/"+id, map[string]any{"testset": map[string]any{"id": id, "data": map[string]any{"testcases": []any{map[string]any{"data": map[string]any{"x": 3}}}}}})
	s.ok(t, "POST", "/testsets/revisions/commit", map[string]any{"testset_revision": map[string]any{"testset_id": id, "testset_revision_id": first,
		"delta": map[string]any{"columns": map[string]any{"remove": []any{"y"}}, "rows": map[string]any{"add": []any{map[string]any{"data": map[string]any{"x": 4}}}}}}})
	r := s.upload(t, "/simple/testsets/"+id+"/upload", nil, "f.csv", []byte("x,y\n1.0,é\n"))
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	s.ok(t, "PUT", "/testsets/revisions/"+first, map[string]any{"testset_revision": map[string]any{"id": first, "name": "header only"}})

	assert.JSONEq(t, string(before), string(read()))
	assert.Contains(t, string(s.do(t, "GET", "/testsets/revisions/"+first, nil).body), `"x":1.0`, "number literals come back as committed")
}

func TestTestcases(t *testing.T) {
	s := newServer(t)
	tsID, vID := newTestset(t, s, "tc")
	r1 := commitRows(t, s, tsID, vID, map[string]any{"n": "1"}, map[string]any{"n": "2"}, map[string]any{"n": "3"})
	commitRows(t, s, tsID, vID, map[string]any{"n": "4"})
	ids := list(t, obj(t, r1, "data"), "testcase_ids")

	one := s.ok(t, "GET", "/testcases/"+str(ids[0]), nil)
	tc := obj(t, one, "testcase")
	assert.Equal(t, tsID, tc["testset_id"])
	assert.Equal(t, tsID, tc["set_id"], "/testcases shows both")
	assert.Equal(t, map[string]any{"count": float64(0)}, s.ok(t, "GET", "/testcases/0190f0a0-0000-7000-8000-00000000ffff", nil))

	many := s.ok(t, "GET", fmt.Sprintf("/testcases/?testcase_id=%s&testcase_id=%s", ids[2], ids[0]), nil)
	got := list(t, many, "testcases")
	require.Len(t, got, 2)
	assert.Equal(t, ids[2], got[0].(map[string]any)["id"], "input order is kept")
	assert.EqualValues(t, 3, s.ok(t, "GET", fmt.Sprintf("/testcases?testcase_ids=%s,%s,%s", ids[0], ids[1], ids[2]), nil)["count"])
	r := s.do(t, "GET", "/testcases/", nil)
	require.Equal(t, http.StatusBadRequest, r.status)
	assert.JSONEq(t, `{"detail":"At least one testcase_id query parameter is required."}`, string(r.body))

	t.Run("query by refs pages the revision's list", func(t *testing.T) {
		out := s.ok(t, "POST", "/testcases/query", map[string]any{"testset_revision_ref": map[string]any{"id": r1["id"]}, "windowing": map[string]any{"limit": 2}})
		assert.EqualValues(t, 2, out["count"])
		next := obj(t, out, "windowing")["next"]
		assert.Equal(t, ids[1], next)
		out = s.ok(t, "POST", "/testcases/query", map[string]any{"testset_revision_ref": map[string]any{"id": r1["id"]}, "windowing": map[string]any{"limit": 2, "next": next}})
		assert.EqualValues(t, 1, out["count"])
		assert.NotContains(t, out, "windowing")
	})
	t.Run("query by testset lists every blob ever committed", func(t *testing.T) {
		out := s.ok(t, "POST", "/testcases/query", map[string]any{"testset_id": tsID})
		assert.EqualValues(t, 4, out["count"])
		var seen int
		w := map[string]any{"limit": 3}
		for range 3 {
			page := s.ok(t, "POST", "/testcases/query", map[string]any{"testset_id": tsID, "windowing": w})
			seen += len(list(t, page, "testcases"))
			win, ok := page["windowing"].(map[string]any)
			if !ok {
				break
			}
			w = map[string]any{"limit": 3, "next": win["next"], "oldest": win["oldest"]}
		}
		assert.Equal(t, 4, seen)
	})
	t.Run("explicit ids and no filter", func(t *testing.T) {
		out := s.ok(t, "POST", "/testcases/query", map[string]any{"testcase_ids": []any{ids[1]}})
		assert.EqualValues(t, 1, out["count"])
		r := s.do(t, "POST", "/testcases/query", map[string]any{})
		require.Equal(t, http.StatusBadRequest, r.status)
	})
}

// TestSimpleTestsetQueryIsPaged: POST /simple/testsets/query answered
// every testset with every testcase inline (51 MB for 21 testsets). It now
// answers at most Limits.QueryTestsets testsets, with a windowing to page
// on when more follow, and inlines at most Limits.QueryTestcases testcases
// of each (testcase_ids stays whole; the rest is read page by page from
// /testcases/query or /testsets/revisions/retrieve).
func TestSimpleTestsetQueryIsPaged(t *testing.T) {
	s := newServer(t, tcfile.Limits{MaxRows: 100, MaxBytes: 1 << 20, QueryTestsets: 2, QueryTestcases: 3})
	rows := func(vals ...string) []any {
		out := []any{}
		for _, v := range vals {
			out = append(out, map[string]any{"data": map[string]any{"input": v}})
		}
		return out
	}
	for _, slug := range []string{"paged-a", "paged-b", "paged-c"} {
		s.ok(t, "POST", "/simple/testsets/", map[string]any{"testset": map[string]any{"slug": slug,
			"data": map[string]any{"testcases": rows("1", "2", "3", "4", "5")}}})
	}
	first := s.ok(t, "POST", "/simple/testsets/query", map[string]any{})
	require.EqualValues(t, 2, first["count"], "at most QueryTestsets testsets per answer")
	for _, ts := range list(t, first, "testsets") {
		data := obj(t, ts.(map[string]any), "data")
		assert.Len(t, list(t, data, "testcase_ids"), 5, "the id list stays whole")
		assert.Len(t, list(t, data, "testcases"), 3, "at most QueryTestcases inline")
	}
	win := obj(t, first, "windowing")
	require.NotEmpty(t, win["next"], "more follow: the answer says where the next page starts")

	rest := s.ok(t, "POST", "/simple/testsets/query", map[string]any{"windowing": map[string]any{"next": win["next"], "limit": 2}})
	require.EqualValues(t, 1, rest["count"])
	assert.NotContains(t, rest, "windowing", "the last page")
	seen := map[any]bool{}
	for _, page := range []map[string]any{first, rest} {
		for _, ts := range list(t, page, "testsets") {
			seen[ts.(map[string]any)["slug"]] = true
		}
	}
	assert.Len(t, seen, 3, "the pages cover every testset once")

	big := s.ok(t, "POST", "/simple/testsets/query", map[string]any{"windowing": map[string]any{"limit": 100}})
	assert.EqualValues(t, 2, big["count"], "a larger limit is clamped to QueryTestsets")
}

// TestUploadNamedTestset: a file uploaded with a name and no slug (what the
// console's upload form sends) gets a slug made from the name, unique in
// the project, so `assay testsets pull capitals-qa` finds it; its version
// says what the upload was; downloads leave the server's id columns out
// unless asked for them.
func TestUploadNamedTestset(t *testing.T) {
	s := newServer(t)
	csv := []byte("country,correct_answer\nFrance,Paris\nItaly,Rome\nSpain,Madrid\n")
	up := func(name string) map[string]any {
		r := s.upload(t, "/simple/testsets/upload", map[string]string{"testset_name": name}, "capitals.csv", csv)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		return obj(t, r.json(t), "testset")
	}
	first := up("Capitals QA")
	assert.Equal(t, "capitals-qa", first["slug"])
	assert.Equal(t, "Capitals QA", first["name"])
	assert.Equal(t, "capitals-qa-2", up("Capitals QA")["slug"], "unique within the project")
	assert.Equal(t, "capitals-qa-3", up("  capitals   QA!! ")["slug"])
	assert.Equal(t, "ete-a-paris", up("Été à Paris")["slug"])
	assert.Regexp(t, `^[0-9a-f]{12}$`, up("???")["slug"], "a name with nothing to keep falls back to the generated slug")

	rev := obj(t, s.ok(t, "GET", "/testsets/revisions/"+str(first["revision_id"])+"?include_testcases=false", nil), "testset_revision")
	assert.Equal(t, "Uploaded capitals.csv (3 rows)", rev["message"])

	// An upload of a new revision says so too.
	r := s.upload(t, "/simple/testsets/"+str(first["id"])+"/upload", nil, "capitals-v2.csv", []byte("country,correct_answer\nFrance,Paris\n"))
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	rev = obj(t, s.ok(t, "GET", "/testsets/revisions/"+str(obj(t, r.json(t), "testset")["revision_id"])+"?include_testcases=false", nil), "testset_revision")
	assert.Equal(t, "Uploaded capitals-v2.csv (1 row)", rev["message"])

	d := s.do(t, "POST", "/testsets/revisions/"+str(first["revision_id"])+"/download?file_type=csv", nil)
	require.Equal(t, http.StatusOK, d.status, string(d.body))
	assert.Equal(t, "country,correct_answer\nFrance,Paris\nItaly,Rome\nSpain,Madrid\n", string(d.body))
	d = s.do(t, "POST", "/simple/testsets/"+str(first["id"])+"/download?file_type=json", nil)
	require.Equal(t, http.StatusOK, d.status, string(d.body))
	assert.Equal(t, `[{"country":"France","correct_answer":"Paris"}]`, string(d.body))
	d = s.do(t, "POST", "/testsets/revisions/"+str(first["revision_id"])+"/download?file_type=csv&include_ids=true", nil)
	assert.True(t, strings.HasPrefix(string(d.body), "country,correct_answer,__dedup_id__,__id__\n"), string(d.body))
	d = s.do(t, "POST", "/testsets/revisions/"+str(first["revision_id"])+"/download?file_type=csv&include_ids=maybe", nil)
	assert.Equal(t, http.StatusUnprocessableEntity, d.status)
	assert.Contains(t, string(d.body), "include_ids")
}

// TestSimpleTestsetSlugFromName: a testset created with a name and no
// slug gets its slug from the name, free in the project, as applications
// and evaluators do (TestSimpleSlugFromName); with neither a slug nor a
// name with something to keep, the slug is missing (422 naming it).
func TestSimpleTestsetSlugFromName(t *testing.T) {
	s := newServer(t)
	create := func(name string) resp {
		return s.do(t, "POST", "/simple/testsets/", map[string]any{"testset": map[string]any{"name": name,
			"data": map[string]any{"testcases": []any{map[string]any{"data": map[string]any{"q": "2+2", "answer": "4"}}}}}})
	}
	r := create("Arithmetic QA")
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	first := obj(t, r.json(t), "testset")
	assert.Equal(t, "arithmetic-qa", first["slug"])
	assert.Equal(t, "Arithmetic QA", first["name"])
	r = create("Arithmetic  QA!")
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.Equal(t, "arithmetic-qa-2", obj(t, r.json(t), "testset")["slug"], "a slug taken in the project gets a suffix")

	for _, body := range []map[string]any{
		{"testset": map[string]any{"name": "???"}},
		{"testset": map[string]any{"data": map[string]any{"testcases": []any{}}}},
	} {
		r := s.do(t, "POST", "/simple/testsets/", body)
		assert.Equal(t, http.StatusUnprocessableEntity, r.status, "%v: %s", body, r.body)
		assert.Contains(t, string(r.body), `"loc":["body","testset","slug"]`, "%v", body)
	}
}
