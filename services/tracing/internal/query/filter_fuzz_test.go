package query_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/assayhq/assay/services/tracing/internal/query"
)

// FuzzCompile: any input either compiles to SQL whose placeholders match
// its arguments, or is rejected with an error; it never panics.
func FuzzCompile(f *testing.F) {
	for _, seed := range []string{
		`{"conditions":[{"field":"span_name","operator":"contains","value":"a"}]}`,
		`{"operator":"or","conditions":[{"field":"attributes","key":"ag.data.inputs","value":{"a":{"b":1}}},{"operator":"not","conditions":[{"field":"links","operator":"in","value":[{"trace_id":"0af7651916cd43dd8448eb211c80319c"}]}]}]}`,
		`{"conditions":[{"field":"attributes","key":"k","operator":"btwn","value":[1,2]},{"field":"references","operator":"in","value":[{"slug":"x","attributes":{"key":"application"}}]}]}`,
		`{"conditions":[{"field":"start_time","operator":"in","value":["2024-01-01T00:00:00Z",1714979289]}]}`,
		`{"operator":"nand"}`, `[]`, `null`, `{"conditions":[{"field":"content","operator":"contains","value":"x"}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) {
			return
		}
		c, err := query.Compile(in, "filtering", query.DefaultLimits().Filter)
		if err != nil {
			return
		}
		if n := strings.Count(c.SQL, "?"); n != len(c.Args) {
			t.Fatalf("%d placeholders, %d args: %s", n, len(c.Args), c.SQL)
		}
	})
}
