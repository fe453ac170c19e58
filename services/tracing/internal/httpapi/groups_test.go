package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAnalyticsGroups: the internal grouped analytics over the seeded
// traces (A: an invocation whose child has 15 tokens; B: an annotation).
func TestAnalyticsGroups(t *testing.T) {
	s := newStack(t)
	seed(t, s)
	const route = "/internal/analytics/groups"

	t.Run("groups with the default specs", func(t *testing.T) {
		r := s.doJSON(t, "POST", route, map[string]any{"groups": map[string]any{
			"a": []string{tidA}, "both": []string{tidA, strings.ToUpper(tidB)}, "none": []string{}}})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		body := r.json(t)
		assert.Equal(t, 3.0, body["count"])
		groups := body["groups"].(map[string]any)
		group := func(name string) (map[string]any, float64) {
			g := groups[name].(map[string]any)
			return g["metrics"].(map[string]any), g["roots"].(float64)
		}
		m, roots := group("a")
		assert.Equal(t, 1.0, roots)
		assert.Len(t, m, 6, "the six default specs")
		tok := m["attributes.ag.metrics.tokens.cumulative.total"].(map[string]any)
		assert.Equal(t, 15.0, tok["sum"], "the child's tokens rolled up into the root")
		m, roots = group("both")
		assert.Equal(t, 2.0, roots)
		assert.ElementsMatch(t, []any{
			map[string]any{"value": "invocation", "count": 1.0, "density": 0.5},
			map[string]any{"value": "annotation", "count": 1.0, "density": 0.5},
		}, m["attributes.ag.type.trace"].(map[string]any)["freq"], "roots only: B's two children are not counted")
		_, roots = group("none")
		assert.Equal(t, 0.0, roots)
	})

	t.Run("specs", func(t *testing.T) {
		r := s.doJSON(t, "POST", route, map[string]any{
			"specs":  []any{map[string]any{"type": "categorical/single", "path": "span_name"}},
			"groups": map[string]any{"g": []string{tidA, tidB}}})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		m := r.json(t)["groups"].(map[string]any)["g"].(map[string]any)["metrics"].(map[string]any)
		assert.Len(t, m, 1)
		assert.Equal(t, 2.0, m["span_name"].(map[string]any)["uniq"], "root and annotate")
	})

	many := make([]string, 10001)
	for i := range many {
		many[i] = fmt.Sprintf("%032x", i+1)
	}
	for _, tc := range []struct {
		name string
		body string
		want string
	}{
		{"not JSON", `{"groups":`, "malformed groups body"},
		{"unknown key", `{"groups":{"g":[]},"filter":{}}`, "unknown field"},
		{"no groups", `{}`, "groups: at least one group"},
		{"a bad trace id", `{"groups":{"g":["` + tidA + `","zz"]}}`, "groups.g[1]"},
		{"a bad spec", `{"specs":[{"type":"numeric/continuous","path":"nope"}],"groups":{"g":[]}}`, "specs[0].path"},
		{"too many traces", `{"groups":{"g":["` + strings.Join(many, `","`) + `"]}}`, "over the limit of 10000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do(t, "POST", route, []byte(tc.body), nil)
			assert.Equal(t, http.StatusBadRequest, r.status, string(r.body))
			assert.Contains(t, string(r.body), tc.want)
		})
	}

	t.Run("internal token required", func(t *testing.T) {
		req, err := http.NewRequest("POST", s.url+route, strings.NewReader(`{"groups":{"g":[]}}`))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	})
}
