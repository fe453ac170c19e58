package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newTestset creates an artifact and a variant and returns their ids.
func newTestset(t *testing.T, s *server, slug string) (testsetID, variantID string) {
	t.Helper()
	a := s.ok(t, "POST", "/testsets/", map[string]any{"testset": map[string]any{"slug": slug, "name": "T " + slug}})
	testsetID = str(obj(t, a, "testset")["id"])
	v := s.ok(t, "POST", "/testsets/variants/", map[string]any{"testset_variant": map[string]any{"slug": slug + "-main", "testset_id": testsetID}})
	return testsetID, str(obj(t, v, "testset_variant")["id"])
}

func commitRows(t *testing.T, s *server, testsetID, variantID string, rows ...map[string]any) map[string]any {
	t.Helper()
	tcs := make([]any, len(rows))
	for i, r := range rows {
		tcs[i] = map[string]any{"data": r}
	}
	out := s.ok(t, "POST", "/testsets/revisions/commit", map[string]any{"testset_revision": map[string]any{
		"testset_id": testsetID, "testset_variant_id": variantID, "message": "rows", "data": map[string]any{"testcases": tcs}}})
	return obj(t, out, "testset_revision")
}

func TestTestsetArtifacts(t *testing.T) {
	s := newServer(t)

	created := s.ok(t, "POST", "/testsets/", map[string]any{"testset": map[string]any{
		"slug": "qa", "name": "QA", "description": "d", "tags": map[string]any{"team": "ml", "nested": map[string]any{"ok": true}}, "meta": map[string]any{"n": 1}}})
	assert.EqualValues(t, 1, created["count"])
	ts := obj(t, created, "testset")
	id := str(ts["id"])
	assert.Equal(t, "qa", ts["slug"])
	assert.NotContains(t, ts, "updated_at", "nulls are omitted")
	assert.NotContains(t, ts, "flags", "omitted flags stay absent")
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`, ts["created_at"])

	t.Run("duplicate slug is a 409 naming it", func(t *testing.T) {
		r := s.do(t, "POST", "/testsets/", map[string]any{"testset": map[string]any{"slug": "qa"}})
		require.Equal(t, http.StatusConflict, r.status)
		assert.JSONEq(t, `{"detail":{"message":"A resource with slug 'qa' already exists in this project.","conflict":{"slug":"qa"}}}`, string(r.body))
	})
	t.Run("bad slug and bad tags are 422 naming the field", func(t *testing.T) {
		r := s.do(t, "POST", "/testsets/", map[string]any{"testset": map[string]any{"slug": "a b"}})
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		assert.Contains(t, string(r.body), "'slug' must be URL-safe.")
		r = s.do(t, "POST", "/testsets/", map[string]any{"testset": map[string]any{"slug": "t2", "tags": map[string]any{"n": 1}}})
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		assert.Contains(t, string(r.body), `"tags"`)
	})
	t.Run("missing slug gives the empty envelope", func(t *testing.T) {
		assert.Equal(t, map[string]any{"count": float64(0)}, s.ok(t, "POST", "/testsets/", map[string]any{"testset": map[string]any{"name": "x"}}))
	})
	t.Run("forced id", func(t *testing.T) {
		forced := "0190f0a0-0000-7000-8000-0000000000aa"
		out := s.ok(t, "POST", "/testsets/?testset_id="+forced, map[string]any{"testset": map[string]any{"slug": "forced"}})
		assert.Equal(t, forced, obj(t, out, "testset")["id"])
	})
	t.Run("fetch, missing, non-uuid", func(t *testing.T) {
		assert.Equal(t, "QA", obj(t, s.ok(t, "GET", "/testsets/"+id, nil), "testset")["name"])
		assert.Equal(t, map[string]any{"count": float64(0)}, s.ok(t, "GET", "/testsets/0190f0a0-0000-7000-8000-00000000ffff", nil))
		r := s.do(t, "GET", "/testsets/nope", nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		assert.Contains(t, string(r.body), `"id"`)
	})
	t.Run("edit replaces the header; a mismatched id changes nothing", func(t *testing.T) {
		out := s.ok(t, "PUT", "/testsets/"+id, map[string]any{"testset": map[string]any{"id": id, "name": "QA2", "slug": "ignored"}})
		ts := obj(t, out, "testset")
		assert.Equal(t, "QA2", ts["name"])
		assert.Equal(t, "qa", ts["slug"], "slugs are immutable")
		assert.NotContains(t, ts, "description", "omitted fields become null")
		assert.Contains(t, ts, "updated_at")
		other := "0190f0a0-0000-7000-8000-00000000ffff"
		assert.Equal(t, map[string]any{"count": float64(0)}, s.ok(t, "PUT", "/testsets/"+id, map[string]any{"testset": map[string]any{"id": other, "name": "x"}}))
	})
	t.Run("archive hides from query unless include_archived", func(t *testing.T) {
		ts := obj(t, s.ok(t, "POST", "/testsets/"+id+"/archive", nil), "testset")
		assert.Contains(t, ts, "deleted_at")
		q := s.ok(t, "POST", "/testsets/query", map[string]any{"testset_refs": []any{map[string]any{"id": id}}})
		assert.EqualValues(t, 0, q["count"])
		q = s.ok(t, "POST", "/testsets/query", map[string]any{"testset_refs": []any{map[string]any{"id": id}}, "include_archived": true})
		assert.EqualValues(t, 1, q["count"])
		ts = obj(t, s.ok(t, "POST", "/testsets/"+id+"/unarchive", nil), "testset")
		assert.NotContains(t, ts, "deleted_at")
	})
	t.Run("query filters and windowing", func(t *testing.T) {
		for i := range 5 {
			s.ok(t, "POST", "/testsets/", map[string]any{"testset": map[string]any{"slug": fmt.Sprintf("page-%d", i), "name": "Paged", "tags": map[string]any{"k": "v"}}})
		}
		q := s.ok(t, "POST", "/testsets/query", map[string]any{"testset": map[string]any{"name": "pag", "tags": map[string]any{"k": "v"}}})
		assert.EqualValues(t, 5, q["count"])
		var seen []string
		var next any
		for range 4 {
			w := map[string]any{"limit": 2}
			if next != nil {
				w["next"] = next
			}
			page := s.ok(t, "POST", "/testsets/query", map[string]any{"testset": map[string]any{"name": "Paged"}, "windowing": w})
			for _, it := range list(t, page, "testsets") {
				seen = append(seen, str(it.(map[string]any)["slug"]))
			}
			win, ok := page["windowing"].(map[string]any)
			if !ok {
				break
			}
			next = win["next"]
		}
		assert.Equal(t, []string{"page-4", "page-3", "page-2", "page-1", "page-0"}, seen, "newest first, every row once")
	})
}

func TestTestsetVariants(t *testing.T) {
	s := newServer(t)
	tsID, vID := newTestset(t, s, "v")

	v := obj(t, s.ok(t, "GET", "/testsets/variants/"+vID, nil), "testset_variant")
	assert.Equal(t, tsID, v["testset_id"])
	assert.Equal(t, "v", v["testset_slug"])
	assert.Equal(t, "v-main", v["name"], "the name defaults to the slug")

	t.Run("a variant of a missing testset is a 404 naming it", func(t *testing.T) {
		missing := "0190f0a0-0000-7000-8000-00000000ffff"
		r := s.do(t, "POST", "/testsets/variants/", map[string]any{"testset_variant": map[string]any{"slug": "orphan", "testset_id": missing}})
		require.Equal(t, http.StatusNotFound, r.status)
		assert.JSONEq(t, `{"detail":{"message":"Testset '`+missing+`' was not found in this project.","reference":{"testset_id":"`+missing+`"}}}`, string(r.body))
	})
	t.Run("edit, archive cascades to revisions, query", func(t *testing.T) {
		rev := commitRows(t, s, tsID, vID, map[string]any{"a": "1"})
		out := obj(t, s.ok(t, "PUT", "/testsets/variants/"+vID, map[string]any{"testset_variant": map[string]any{"id": vID, "description": "dd"}}), "testset_variant")
		assert.Equal(t, "dd", out["description"])
		s.ok(t, "POST", "/testsets/variants/"+vID+"/archive", nil)
		r := obj(t, s.ok(t, "GET", "/testsets/revisions/"+str(rev["id"]), nil), "testset_revision")
		assert.Contains(t, r, "deleted_at")
		q := s.ok(t, "POST", "/testsets/variants/query", map[string]any{"testset_refs": []any{map[string]any{"id": tsID}}})
		assert.EqualValues(t, 0, q["count"])
		s.ok(t, "POST", "/testsets/variants/"+vID+"/unarchive", nil)
		q = s.ok(t, "POST", "/testsets/variants/query", map[string]any{"testset_refs": []any{map[string]any{"slug": "v"}}})
		assert.EqualValues(t, 1, q["count"])
		assert.NotContains(t, q, "windowing")
	})
}

func TestTestsetRevisionsAndCommits(t *testing.T) {
	s := newServer(t)
	tsID, vID := newTestset(t, s, "rev")

	first := s.ok(t, "POST", "/testsets/revisions/", map[string]any{"testset_revision": map[string]any{"testset_id": tsID, "testset_variant_id": vID}})
	r0 := obj(t, first, "testset_revision")
	assert.Equal(t, "0", r0["version"])
	assert.Equal(t, "Initial revision", r0["message"])
	assert.NotContains(t, r0, "data", "v0 without content is a placeholder")
	for _, k := range []string{"testset_id", "testset_variant_id", "testset_slug", "testset_variant_slug", "artifact_slug", "variant_slug"} {
		assert.Contains(t, r0, k)
	}
	assert.NotContains(t, r0, "artifact_id")

	r := s.do(t, "POST", "/testsets/revisions/", map[string]any{"testset_revision": map[string]any{"testset_id": tsID, "testset_variant_id": vID}})
	require.Equal(t, http.StatusConflict, r.status)
	assert.Contains(t, string(r.body), "An initial revision already exists for this variant.")

	t.Run("commit messages for data and delta", func(t *testing.T) {
		base := map[string]any{"testset_id": tsID, "testset_variant_id": vID}
		both := map[string]any{"data": map[string]any{"testcases": []any{}}, "delta": map[string]any{}}
		neither := map[string]any{}
		for body, want := range map[*map[string]any]string{&both: "Provide either data or delta for a commit, not both.", &neither: "Provide either data or delta for a commit."} {
			in := map[string]any{}
			for k, v := range base {
				in[k] = v
			}
			for k, v := range *body {
				in[k] = v
			}
			r := s.do(t, "POST", "/testsets/revisions/commit", map[string]any{"testset_revision": in})
			require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
			assert.JSONEq(t, fmt.Sprintf(`{"detail":%q}`, want), string(r.body))
		}
		r := s.do(t, "POST", "/testsets/revisions/commit", map[string]any{"testset_revision": map[string]any{"testset_id": tsID, "testset_variant_id": vID, "data": map[string]any{"rows": []any{}}}})
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		assert.Contains(t, string(r.body), `"rows"`)
	})

	r1 := commitRows(t, s, tsID, vID, map[string]any{"q": "1+1", "a": "2"}, map[string]any{"q": "1+1", "a": "2"}, map[string]any{"q": "2+2", "a": "4"})
	assert.Equal(t, "1", r1["version"])
	data := obj(t, r1, "data")
	ids := list(t, data, "testcase_ids")
	require.Len(t, ids, 3)
	assert.Equal(t, ids[0], ids[1], "plain commits add no dedup id, so identical rows share a blob")
	tcs := list(t, data, "testcases")
	require.Len(t, tcs, 3)
	first0 := tcs[0].(map[string]any)
	assert.Equal(t, tsID, first0["testset_id"])
	assert.NotContains(t, first0, "set_id", "revision payloads leave set_id out")

	t.Run("delta: columns then rows", func(t *testing.T) {
		out := s.ok(t, "POST", "/testsets/revisions/commit", map[string]any{"testset_revision_commit": map[string]any{
			"testset_id": tsID, "testset_revision_id": r1["id"],
			"delta": map[string]any{
				"columns": map[string]any{"remove": []any{"q"}, "replace": []any{[]any{"a", "answer"}}, "add": []any{"note"}},
				"rows":    map[string]any{"remove": []any{ids[2]}, "add": []any{map[string]any{"data": map[string]any{"answer": "9"}}}},
			}}})
		rev := obj(t, out, "testset_revision")
		assert.Equal(t, "2", rev["version"])
		assert.Equal(t, "Patched testset revision", rev["message"])
		var got []any
		for _, tc := range list(t, obj(t, rev, "data"), "testcases") {
			got = append(got, tc.(map[string]any)["data"])
		}
		assert.Equal(t, []any{
			map[string]any{"answer": "2", "note": ""}, map[string]any{"answer": "2", "note": ""}, map[string]any{"answer": "9"},
		}, got)
	})

	t.Run("fetch with and without testcases, edit header only", func(t *testing.T) {
		out := obj(t, s.ok(t, "GET", "/testsets/revisions/"+str(r1["id"])+"?include_testcases=false", nil), "testset_revision")
		assert.NotContains(t, obj(t, out, "data"), "testcases")
		assert.Len(t, list(t, obj(t, out, "data"), "testcase_ids"), 3)
		ed := obj(t, s.ok(t, "PUT", "/testsets/revisions/"+str(r1["id"]), map[string]any{"testset_revision": map[string]any{"id": r1["id"], "name": "renamed"}}), "testset_revision")
		assert.Equal(t, "renamed", ed["name"])
		assert.Equal(t, ids, list(t, obj(t, ed, "data"), "testcase_ids"), "edits never touch data")
	})

	t.Run("log newest first with depth", func(t *testing.T) {
		out := s.ok(t, "POST", "/testsets/revisions/log", map[string]any{"testset_revisions": map[string]any{"testset_variant_id": vID, "depth": 2}})
		revs := list(t, out, "testset_revisions")
		require.Len(t, revs, 2)
		assert.Equal(t, "2", revs[0].(map[string]any)["version"])
		assert.Equal(t, "1", revs[1].(map[string]any)["version"])
		assert.NotContains(t, revs[0], "testset_slug", "log leaves slug aliases out")
		out = s.ok(t, "POST", "/testsets/revisions/log", map[string]any{"testset_revisions": map[string]any{"testset_id": tsID, "depth": 0}})
		assert.EqualValues(t, 0, out["count"])
	})

	t.Run("query revisions by variant with windowing", func(t *testing.T) {
		out := s.ok(t, "POST", "/testsets/revisions/query", map[string]any{
			"testset_variant_refs": []any{map[string]any{"id": vID}}, "include_testcases": false, "windowing": map[string]any{"limit": 2, "order": "ascending"}})
		revs := list(t, out, "testset_revisions")
		require.Len(t, revs, 2)
		assert.Equal(t, "0", revs[0].(map[string]any)["version"])
		assert.Contains(t, out, "windowing")
	})

	t.Run("archive and unarchive a revision", func(t *testing.T) {
		out := obj(t, s.ok(t, "POST", "/testsets/revisions/"+str(r1["id"])+"/archive", nil), "testset_revision")
		assert.Contains(t, out, "deleted_at")
		out = obj(t, s.ok(t, "POST", "/testsets/revisions/"+str(r1["id"])+"/unarchive", nil), "testset_revision")
		assert.NotContains(t, out, "deleted_at")
	})

	t.Run("fork copies the lineage up to a revision", func(t *testing.T) {
		out := s.ok(t, "POST", "/testsets/variants/fork", map[string]any{
			"testset_variant":      map[string]any{"slug": "forked"},
			"testset_variant_ref":  map[string]any{"id": vID},
			"testset_revision_ref": map[string]any{"id": r1["id"]},
		})
		fv := obj(t, out, "testset_variant")
		log := s.ok(t, "POST", "/testsets/revisions/log", map[string]any{"testset_revisions": map[string]any{"testset_variant_id": fv["id"]}})
		revs := list(t, log, "testset_revisions")
		require.Len(t, revs, 2)
		assert.Equal(t, "1", revs[0].(map[string]any)["version"])
		assert.Equal(t, ids, list(t, obj(t, revs[0].(map[string]any), "data"), "testcase_ids"))
		r := s.do(t, "POST", "/testsets/variants/fork", map[string]any{"testset_variant": map[string]any{"slug": "f2"}, "testset_variant_ref": map[string]any{"slug": "nope"}})
		require.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, string(r.body), "variant")
	})
}

func TestTestsetRetrieve(t *testing.T) {
	s := newServer(t)
	tsID, vID := newTestset(t, s, "ret")
	rows := []map[string]any{}
	for i := range 5 {
		rows = append(rows, map[string]any{"i": fmt.Sprint(i)})
	}
	r1 := commitRows(t, s, tsID, vID, rows...)
	r2 := commitRows(t, s, tsID, vID, rows[:2]...)
	retrieve := func(body map[string]any) map[string]any { return s.ok(t, "POST", "/testsets/revisions/retrieve", body) }

	out := retrieve(map[string]any{"testset_ref": map[string]any{"id": tsID}})
	rev := obj(t, out, "testset_revision")
	assert.Equal(t, r2["id"], rev["id"], "an artifact ref gives the default variant's latest")
	assert.Len(t, list(t, obj(t, rev, "data"), "testcases"), 2, "testcases are included by default")
	assert.Len(t, list(t, obj(t, rev, "data"), "testcase_ids"), 2, "ids are included by default")
	refs := obj(t, out, "retrieval_info", "references")
	assert.Equal(t, "ret", obj(t, refs, "testset")["slug"])
	assert.Equal(t, "1", obj(t, refs, "testset_revision")["version"])

	cases := []struct {
		name string
		body map[string]any
		want any
	}{
		{"revision id", map[string]any{"testset_revision_ref": map[string]any{"id": r1["id"]}}, r1["id"]},
		{"revision slug", map[string]any{"testset_revision_ref": map[string]any{"slug": r1["slug"]}}, r1["id"]},
		{"variant id", map[string]any{"testset_variant_ref": map[string]any{"id": vID}}, r2["id"]},
		{"variant slug + version", map[string]any{"testset_variant_ref": map[string]any{"slug": "ret-main"}, "testset_revision_ref": map[string]any{"version": "0"}}, r1["id"]},
		{"artifact + version", map[string]any{"testset_ref": map[string]any{"slug": "ret"}, "testset_revision_ref": map[string]any{"version": "1"}}, r2["id"]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, obj(t, retrieve(tc.body), "testset_revision")["id"])
		})
	}
	t.Run("nothing named or nothing found is an empty envelope", func(t *testing.T) {
		assert.Equal(t, map[string]any{"count": float64(0)}, retrieve(map[string]any{}))
		assert.Equal(t, map[string]any{"count": float64(0)}, retrieve(map[string]any{"testset_ref": map[string]any{"slug": "nope"}}))
		assert.Equal(t, map[string]any{"count": float64(0)}, retrieve(map[string]any{"testset_ref": map[string]any{"id": tsID}, "testset_revision_ref": map[string]any{"version": "9"}}))
	})
	t.Run("ambiguous or inconsistent refs are 400", func(t *testing.T) {
		r := s.do(t, "POST", "/testsets/revisions/retrieve", map[string]any{"testset_variant_ref": map[string]any{"version": "1"}})
		require.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, string(r.body), "testset_variant_ref")
		r = s.do(t, "POST", "/testsets/revisions/retrieve", map[string]any{"testset_revision_ref": map[string]any{"version": "1"}})
		require.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, string(r.body), "version")
		assert.Contains(t, string(r.body), "testset_variant_ref")
		r = s.do(t, "POST", "/testsets/revisions/retrieve", map[string]any{"testset_ref": map[string]any{"slug": "other"}, "testset_revision_ref": map[string]any{"id": r1["id"]}})
		require.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, string(r.body), `testset_ref.slug='other' does not match resolved revision's artifact_slug='ret'`)
	})
	t.Run("opt out of testcases and ids, page the id list", func(t *testing.T) {
		rev := obj(t, retrieve(map[string]any{"testset_revision_ref": map[string]any{"id": r1["id"]}, "include_testcases": false}), "testset_revision")
		assert.NotContains(t, obj(t, rev, "data"), "testcases")
		rev = obj(t, retrieve(map[string]any{"testset_revision_ref": map[string]any{"id": r1["id"]}, "include_testcase_ids": false}), "testset_revision")
		assert.NotContains(t, obj(t, rev, "data"), "testcase_ids")
		assert.Len(t, list(t, obj(t, rev, "data"), "testcases"), 5)

		all := list(t, obj(t, obj(t, retrieve(map[string]any{"testset_revision_ref": map[string]any{"id": r1["id"]}}), "testset_revision"), "data"), "testcase_ids")
		var paged []any
		w := map[string]any{"limit": 2}
		for {
			out := retrieve(map[string]any{"testset_revision_ref": map[string]any{"id": r1["id"]}, "windowing": w})
			paged = append(paged, list(t, obj(t, obj(t, out, "testset_revision"), "data"), "testcase_ids")...)
			win, ok := out["windowing"].(map[string]any)
			if !ok {
				break
			}
			w = map[string]any{"limit": 2, "next": win["next"]}
		}
		assert.Equal(t, all, paged)
		desc := list(t, obj(t, obj(t, retrieve(map[string]any{"testset_revision_ref": map[string]any{"id": r1["id"]}, "windowing": map[string]any{"order": "descending", "limit": 1}}), "testset_revision"), "data"), "testcase_ids")
		assert.Equal(t, []any{all[4]}, desc)
	})
}
