package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRevisionOnlyFiltersOnArtifactsAndVariants: author, authors, date,
// dates and message are revision columns; named in an artifact or variant
// query they reached PostgreSQL as columns that do not exist there (500).
// They are a 422 naming the key; on revisions they filter.
func TestRevisionOnlyFiltersOnArtifactsAndVariants(t *testing.T) {
	s := newServer(t)
	const author = "0190f0a0-0000-7000-8000-000000000001"
	for _, q := range []struct{ path, key string }{
		{"/testsets/query", "testset"}, {"/testsets/variants/query", "testset_variant"},
		{"/simple/testsets/query", "testset"}, {"/simple/evaluators/query", "evaluator"},
	} {
		for _, f := range []map[string]any{
			{"author": author}, {"authors": []any{author}}, {"message": "m"},
			{"date": "2024-01-01T00:00:00Z"}, {"dates": []any{"2024-01-01T00:00:00Z"}},
		} {
			r := s.do(t, "POST", q.path, map[string]any{q.key: f})
			assert.Equal(t, http.StatusUnprocessableEntity, r.status, "%s %v: %s", q.path, f, r.body)
			for k := range f {
				assert.Contains(t, string(r.body), `"`+k+`"`, "the answer names the key")
			}
		}
	}
	// The routes that also take URL parameters ignore an ill-typed body, as
	// the compatible platform does (urlquery.go): never a 500 there either.
	for _, path := range []string{"/workflows/query", "/workflows/variants/query"} {
		key := map[string]string{"/workflows/query": "workflow", "/workflows/variants/query": "workflow_variant"}[path]
		r := s.do(t, "POST", path, map[string]any{key: map[string]any{"author": author, "message": "m"}})
		assert.Less(t, r.status, 500, "%s: %s", path, r.body)
	}
	// On revisions they filter.
	for _, f := range []map[string]any{{"author": author}, {"message": "m"}, {"dates": []any{"2024-01-01T00:00:00Z"}}} {
		r := s.do(t, "POST", "/testsets/revisions/query", map[string]any{"testset_revision": f})
		assert.Equal(t, http.StatusOK, r.status, "%v: %s", f, r.body)
	}
}
