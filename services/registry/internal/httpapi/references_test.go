package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// as returns a copy of s acting for another project on the same database.
func (s *server) as(project uuid.UUID) *server {
	other := *s
	other.project = project
	return &other
}

// gitFamily is one family as the reference test below drives it.
type gitFamily struct {
	plural, key string
	data        m
}

func gitFamilies() []gitFamily {
	out := []gitFamily{{plural: "testsets", key: "testset", data: m{"testcases": []any{m{"data": m{"q": "1"}}}}}}
	for _, f := range families {
		out = append(out, gitFamily{plural: f.plural, key: f.key, data: f.data})
	}
	return out
}

// TestCommitNamingAMissingOrForeignParent names, on variant create,
// commit and initial revision create, an artifact or variant that does not
// exist, or exists in another project: each is a 404 naming the reference
// (it was a 409 "Entity with same keys already exists."), the same for
// both so that another project's ids are not disclosed, and nothing is
// written.
func TestCommitNamingAMissingOrForeignParent(t *testing.T) {
	s := newServer(t)
	other := s.as(uuid.New())
	missing := uuid.NewString()
	for _, f := range gitFamilies() {
		t.Run(f.plural, func(t *testing.T) {
			p, k, vk, rk := "/"+f.plural, f.key, f.key+"_variant", f.key+"_revision"
			mk := func(s *server, slug string) (artifact, variant string) {
				a := obj(t, s.ok(t, "POST", p, m{k: m{"slug": slug, "flags": m{}}}), k)
				v := obj(t, s.ok(t, "POST", p+"/variants", m{vk: m{"slug": slug + "-v", k + "_id": a["id"]}}), vk)
				return str(a["id"]), str(v["id"])
			}
			ownA, ownV := mk(s, k+"-own")
			foreignA, foreignV := mk(other, k+"-foreign")

			for _, tc := range []struct {
				name, id string
			}{{"missing", missing}, {"another project's", foreignA}} {
				t.Run("variant of a "+tc.name+" artifact", func(t *testing.T) {
					r := s.do(t, "POST", p+"/variants", m{vk: m{"slug": k + "-orphan-" + tc.id[:8], k + "_id": tc.id}})
					require.Equal(t, http.StatusNotFound, r.status, string(r.body))
					assert.Contains(t, string(r.body), tc.id)
					assert.Contains(t, string(r.body), `_id"`, "the reference's key is named")
				})
			}
			for _, tc := range []struct {
				name, artifact, variant string
			}{
				{"missing variant", ownA, missing},
				{"another project's variant", ownA, foreignV},
				{"another project's artifact and variant", foreignA, foreignV},
			} {
				t.Run("commit on a "+tc.name, func(t *testing.T) {
					r := s.do(t, "POST", p+"/revisions/commit", m{rk: m{k + "_id": tc.artifact, k + "_variant_id": tc.variant, "message": "m", "data": f.data}})
					require.Equal(t, http.StatusNotFound, r.status, string(r.body))
					assert.Contains(t, string(r.body), tc.variant)
					assert.Contains(t, string(r.body), `variant_id"`)
				})
				t.Run("initial revision on a "+tc.name, func(t *testing.T) {
					r := s.do(t, "POST", p+"/revisions", m{rk: m{k + "_id": tc.artifact, k + "_variant_id": tc.variant}})
					require.Equal(t, http.StatusNotFound, r.status, string(r.body))
					assert.Contains(t, string(r.body), tc.variant)
				})
			}
			t.Run("fork of another project's variant", func(t *testing.T) {
				r := s.do(t, "POST", p+"/variants/fork", m{vk: m{"slug": k + "-fork-x"}, vk + "_ref": m{"id": foreignV}})
				require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
				assert.Contains(t, string(r.body), "variant", "the compatible platform's 400 for an unresolved fork source")
			})
			// Nothing was written: the own variant has no revision, the
			// foreign one is untouched.
			assert.EqualValues(t, 0, s.ok(t, "POST", p+"/revisions/query", m{vk + "_refs": []any{m{"id": ownV}}})["count"])
			assert.EqualValues(t, 0, other.ok(t, "POST", p+"/revisions/query", m{vk + "_refs": []any{m{"id": foreignV}}})["count"])
			assert.EqualValues(t, 1, s.ok(t, "POST", p+"/variants/query", m{k + "_refs": []any{m{"id": ownA}}})["count"])
		})
	}
}
