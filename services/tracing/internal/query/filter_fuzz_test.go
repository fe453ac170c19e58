package query_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/assayhq/assay/services/tracing/internal/query"
)

// boundSize is the length of sql once clickhouse-go has written args into
// it, at most: a string takes two bytes per byte (escapes) and its quotes.
func boundSize(sql string, args []any) int {
	n := len(sql) - strings.Count(sql, "?")
	for _, a := range args {
		switch v := a.(type) {
		case string:
			n += 2*len(v) + 2
		case []string:
			for _, s := range v {
				n += 2*len(s) + 4
			}
			n += 2
		case []int64:
			n += 22*len(v) + 2
		default:
			n += 24
		}
	}
	return n
}

// FuzzCompile: any input either compiles to SQL whose placeholders match
// its arguments and whose text, arguments written in, fits ClickHouse's
// max_query_size with room for the rest of the statement, or is rejected
// with an error; it never panics.
func FuzzCompile(f *testing.F) {
	for _, seed := range []string{
		`{"conditions":[{"field":"span_name","operator":"contains","value":"a"}]}`,
		`{"operator":"or","conditions":[{"field":"attributes","key":"ag.data.inputs","value":{"a":{"b":1}}},{"operator":"not","conditions":[{"field":"links","operator":"in","value":[{"trace_id":"0af7651916cd43dd8448eb211c80319c"}]}]}]}`,
		`{"conditions":[{"field":"attributes","key":"k","operator":"btwn","value":[1,2]},{"field":"references","operator":"in","value":[{"slug":"x","attributes":{"key":"application"}}]}]}`,
		`{"conditions":[{"field":"start_time","operator":"in","value":["2024-01-01T00:00:00Z",1714979289]}]}`,
		`{"operator":"nand"}`, `[]`, `null`, `{"conditions":[{"field":"content","operator":"contains","value":"x"}]}`,
		`{"conditions":[{"field":"attributes","key":"tags","operator":"in","value":["x","` + strings.Repeat("y", 300) + `"],"options":{"all":true}}]}`,
		`{"conditions":[{"conditions":[{"conditions":[{"field":"attributes","key":"a.b","operator":"gte","value":"2024"}]}]}]}`,
	} {
		f.Add([]byte(seed))
	}
	lim := query.DefaultLimits()
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) {
			return
		}
		c, err := query.Compile(in, "filtering", lim.Filter)
		if err != nil {
			return
		}
		if n := strings.Count(c.SQL, "?"); n != len(c.Args) {
			t.Fatalf("%d placeholders, %d args: %s", n, len(c.Args), c.SQL)
		}
		if n := boundSize(c.SQL, c.Args); n > lim.MaxQuerySize-64<<10 {
			t.Fatalf("%d bytes of SQL: over max_query_size with the rest of the statement", n)
		}
	})
}
