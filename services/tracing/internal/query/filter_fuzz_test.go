package query_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/testutil/fuzzbound"
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

// compileBound: compiling reads the tree once; re-parsing every subtree at
// every level (quadratic in the depth) crosses it.
var compileBound = fuzzbound.Bound{PerByte: 512, Fixed: 1 << 20}

// The SQL text and the bound values grow at most linearly with the filter:
// a condition of ~30 bytes becomes at most a few hundred bytes of SQL, and a
// value at most a few times its JSON (LIKE escaping, JSON re-encoding).
const (
	sqlPerByte, sqlFixed   = 64, 4096
	argsPerByte, argsFixed = 8, 1024
)

// FuzzCompile: any filter either compiles to SQL whose placeholders match
// its arguments and whose text, arguments written in, fits ClickHouse's
// max_query_size with room for the rest of the statement, or is refused
// with a typed 4xx error; it never panics; the SQL, the arguments and the
// allocations grow linearly with the input.
func FuzzCompile(f *testing.F) {
	for _, seed := range []string{
		`{"conditions":[{"field":"span_name","operator":"contains","value":"a"}]}`,
		`{"operator":"or","conditions":[{"field":"attributes","key":"ag.data.inputs","value":{"a":{"b":1}}},{"operator":"not","conditions":[{"field":"links","operator":"in","value":[{"trace_id":"0af7651916cd43dd8448eb211c80319c"}]}]}]}`,
		`{"conditions":[{"field":"attributes","key":"k","operator":"btwn","value":[1,2]},{"field":"references","operator":"in","value":[{"slug":"x","attributes":{"key":"application"}}]}]}`,
		`{"conditions":[{"field":"start_time","operator":"in","value":["2024-01-01T00:00:00Z",1714979289]}]}`,
		`{"operator":"nand"}`, `[]`, `null`, `{"conditions":[{"field":"content","operator":"contains","value":"x"}]}`,
		`{"conditions":[{"field":"attributes","key":"tags","operator":"in","value":["x","` + strings.Repeat("y", 300) + `"],"options":{"all":true}}]}`,
		`{"conditions":[{"conditions":[{"conditions":[{"field":"attributes","key":"a.b","operator":"gte","value":"2024"}]}]}]}`,
		`{"conditions":[{"field":"attributes","key":"ag.metrics.acc.costs.total","operator":"gte","value":0.5},{"field":"trace_type","operator":"is","value":"invocation"}]}`,
		`{"conditions":[{"field":"attributes","key":"tags.env","operator":"in","value":["a","b","c"]},{"field":"span_type","operator":"not_in","value":["llm","chat"]}]}`,
		`{"conditions":[{"field":"span_name","operator":"matches","value":"^a.*(b|c)$","options":{"case_sensitive":true}},{"field":"span_name","operator":"like","value":"%_\\"}]}`,
		`{"conditions":[{"field":"events","operator":"in","value":[{"name":"exception"}]},{"field":"hashes","operator":"in","value":[{"id":"abc"}]}]}`,
		`{"conditions":[{"field":"attributes","key":"a\u0000b","value":"c\u0000d"},{"field":"span_id","value":null},{"field":"trace_id","operator":"is","value":"zz"}]}`,
		`{"conditions":[{"field":"attributes","key":"k","operator":"in","value":["` + strings.Repeat("v", 4096) + `"]}]}`,
		strings.Repeat(`{"operator":"not","conditions":[`, 30) + `{"field":"span_name","value":"x"}` + strings.Repeat("]}", 30),
		`{"conditions":[` + strings.TrimSuffix(strings.Repeat(`{"field":"span_name","operator":"is","value":"x"},`, 200), ",") + `]}`,
		`{"conditions":"str"}`, `{"conditions":[1]}`, `{"field":1}`, `{"conditions":[{"field":"attributes"}]}`,
	} {
		f.Add([]byte(seed))
	}
	lim := query.DefaultLimits()
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) {
			return // the handler's JSON binding refuses it before the compiler
		}
		var c query.Compiled
		var err error
		compileBound.Check(t, len(in), func() { c, err = query.Compile(in, "filtering", lim.Filter) })
		if err != nil {
			if _, ok := err.(*errs.Error); !ok {
				t.Fatalf("error is %T, not *errs.Error: %v", err, err)
			}
			if st := httpx.Status(errs.KindOf(err)); st < 400 || st >= 500 {
				t.Fatalf("a filter answered %d: %v", st, err)
			}
			return
		}
		if n := strings.Count(c.SQL, "?"); n != len(c.Args) {
			t.Fatalf("%d placeholders, %d args: %s", n, len(c.Args), c.SQL)
		}
		if n := boundSize(c.SQL, c.Args); n > lim.MaxQuerySize-64<<10 {
			t.Fatalf("%d bytes of SQL: over max_query_size with the rest of the statement", n)
		}
		if max := sqlPerByte*len(in) + sqlFixed; len(c.SQL) > max {
			t.Fatalf("%d bytes of filter compiled to %d bytes of SQL (budget %d)", len(in), len(c.SQL), max)
		}
		if n, max := argBytes(c.Args), argsPerByte*len(in)+argsFixed; n > max {
			t.Fatalf("%d bytes of filter bound %d bytes of values (budget %d)", len(in), n, max)
		}
	})
}

// argBytes is about what the arguments add to the query text once bound.
func argBytes(args []any) int {
	n := 0
	for _, a := range args {
		switch v := a.(type) {
		case string:
			n += len(v) + 2
		case []string:
			for _, s := range v {
				n += len(s) + 3
			}
		case []int64:
			n += 21 * len(v)
		default:
			n += 24
		}
	}
	return n
}
