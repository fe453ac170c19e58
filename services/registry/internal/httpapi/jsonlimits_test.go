package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/inputlimits"
)

// TestJSONThatBreaksPythonClients: an integer of 5,000 digits (Python's
// json refuses more than 4,300) or a value nested 5,000 deep (past
// Python's recursion limit) stored in a project breaks every Python client
// that lists it. Such bodies are refused on write with a 422 naming the
// field; values at the limits are stored.
func TestJSONThatBreaksPythonClients(t *testing.T) {
	s := newServer(t)
	_, wfV := mkWorkflow(t, s, "workflows", "workflow", "deep-wf")
	deep := func(n int) string { return strings.Repeat("[", n) + "1" + strings.Repeat("]", n) }
	digits := func(n int) string { return "1" + strings.Repeat("0", n-1) }

	for _, tc := range []struct {
		name, method, path, body string
		loc                      []any
		msg                      string
	}{
		{"a 5,000-digit integer in a testcase", "POST", "/simple/testsets",
			`{"testset":{"slug":"big","data":{"testcases":[{"data":{"n":` + digits(5000) + `}}]}}}`,
			[]any{"body", "testset", "data", "testcases", 0.0, "data", "n"}, "number"},
		{"a long float in meta", "POST", "/testsets", `{"testset":{"slug":"f","meta":{"x":1.` + digits(400) + `e5}}}`,
			[]any{"body", "testset", "meta", "x"}, "number"},
		{"a testcase nested 5,000 deep", "POST", "/simple/testsets",
			`{"testset":{"slug":"deep","data":{"testcases":[{"data":{"q":` + deep(5000) + `}}]}}}`,
			[]any{"body", "testset", "data", "testcases", 0.0, "data", "q"}, "nested"},
		{"workflow parameters nested 5,000 deep", "POST", "/workflows/revisions/commit",
			`{"workflow_revision":{"workflow_variant_id":"` + wfV + `","data":{"uri":"svc:custom:hook:v0","url":"https://h.example.com","parameters":{"p":` + deep(5000) + `}}}}`,
			[]any{"body", "workflow_revision", "data", "parameters", "p"}, "nested"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loc, msg := fieldErr(t, s.do(t, tc.method, tc.path, tc.body))
			require.GreaterOrEqual(t, len(loc), len(tc.loc), "%v", loc)
			assert.Equal(t, tc.loc, loc[:len(tc.loc)])
			assert.Contains(t, msg, tc.msg)
		})
	}

	t.Run("a JSON testset file nested 5,000 deep", func(t *testing.T) {
		r := s.upload(t, "/simple/testsets/upload", nil, "rows.json", []byte(`[{"q":"1"},{"q":`+deep(5000)+`}]`))
		loc, msg := fieldErr(t, r)
		assert.Equal(t, []any{"body", "file", 1.0, "q"}, loc[:4])
		assert.Contains(t, msg, "nested")
	})

	// At the limits (the whole body's depth counts): stored.
	inner := inputlimits.MaxJSONDepth - 6 // body, testset, data, testcases, [0], data
	r := s.do(t, "POST", "/simple/testsets", `{"testset":{"slug":"at-limits","data":{"testcases":[{"data":{"n":`+
		digits(inputlimits.MaxJSONNumberLength)+`,"q":`+deep(inner)+`}}]}}}`)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
}
