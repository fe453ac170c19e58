package authz_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/services/gateway/internal/authz"
)

func TestEveryPatternHasAtMostOneDoubleStar(t *testing.T) {
	for _, r := range authz.Table {
		assert.LessOrEqual(t, strings.Count(r.Pattern, "**"), 1, r.Pattern)
	}
}

func TestMatchPattern(t *testing.T) {
	for _, c := range []struct {
		pattern, path string
		ok            bool
		params        map[string]string
	}{
		{"/**/query", "/testsets/query", true, map[string]string{}},
		{"/**/query", "/query", true, map[string]string{}},
		{"/**/query", "/testsets/query/x", false, nil},
		{"/secrets/**", "/secrets", true, map[string]string{}},
		{"/secrets/**", "/secretsx", false, nil},
		{"/**/:id/download", "/testsets/revisions/r1/download", true, map[string]string{"id": "r1"}},
		{"/:family/revisions/deploy", "/workflows/revisions/deploy", true, map[string]string{"family": "workflows"}},
		{"/keys/:id", "/keys", false, nil},
		{"/", "/", true, map[string]string{}},
	} {
		params, ok := authz.MatchPattern(c.pattern, c.path)
		require.Equal(t, c.ok, ok, "%s %s", c.pattern, c.path)
		if ok {
			assert.Equal(t, c.params, params, "%s %s", c.pattern, c.path)
		}
	}
}

// FuzzLookup: any method and path finds its rule or none without
// panicking, and a rule found matches the path by its own pattern.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{"/testsets/query", "/preview/evaluations/runs/x", "/", "//", "/a/**/b", "/secrets", "/keys/:id", "/services/k/v/invoke"} {
		f.Add("POST", s)
		f.Add("GET", s)
	}
	f.Fuzz(func(t *testing.T, method, path string) {
		r, params, ok := authz.Lookup(method, path)
		if !ok {
			return
		}
		p := strings.TrimPrefix(strings.Trim(path, "/"), "preview")
		if _, ok := authz.MatchPattern(r.Pattern, p); !ok && !strings.HasPrefix(strings.Trim(path, "/"), "preview") {
			t.Fatalf("%s %s matched %s, which does not match it", method, path, r.Pattern)
		}
		for k := range params {
			if !strings.Contains(r.Pattern, ":"+k) {
				t.Fatalf("param %s not in %s", k, r.Pattern)
			}
		}
	})
}

// BenchmarkLookup is the table's cost per request: a route near the end
// of the table (a family default) and one near the start.
func BenchmarkLookup(b *testing.B) {
	for _, p := range []string{"/simple/traces/0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4a5b", "/keys"} {
		b.Run(p, func(b *testing.B) {
			for range b.N {
				if _, _, ok := authz.Lookup("GET", p); !ok {
					b.Fatal(p)
				}
			}
		})
	}
}
