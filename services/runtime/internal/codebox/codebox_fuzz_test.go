package codebox

import (
	"context"
	"testing"
	"time"

	"github.com/assayhq/assay/pkg/errs"
)

// FuzzJavaScript: any source, run with tiny limits, either returns a JSON
// value or a 422 (compile error, throw, a limit); it never panics, never
// hangs past its limit, and never answers a 5xx.
func FuzzJavaScript(f *testing.F) {
	for _, seed := range []string{
		"function evaluate(a, b) { return a + b }",
		"function evaluate() { while (true) {} }",
		"function evaluate() { let a = []; while (true) a.push('x'.repeat(1e5)) }",
		"function evaluate() { return 'x'.repeat(1e9) }",
		"function evaluate() { const a = []; a.push(a); return [String(a), JSON.stringify([1, a.length])] }",
		"async function evaluate() { await null; throw new Error('x') }",
		"function evaluate() { return {d: new Date(), f() {}, n: NaN, b: [undefined, null]} }",
		"export const evaluate = (x: number) => x",
		"function evaluate() { return /(a+)+$/.test('a'.repeat(30) + 'b') }",
		"function evaluate( {",
		"var evaluate = 1",
	} {
		f.Add(seed)
	}
	lim := Limits{Timeout: 100 * time.Millisecond, MemBytes: 8 << 20}
	f.Fuzz(func(t *testing.T, code string) {
		start := time.Now()
		v, err := Run(context.Background(), lim, Call{Code: code, Function: "evaluate", Args: []any{1, map[string]any{"k": "v"}}})
		if d := time.Since(start); d > lim.Timeout+grace+time.Second+regexpTimeout {
			t.Fatalf("ran %s", d)
		}
		if err != nil {
			if k := errs.KindOf(err); k != errs.Unprocessable {
				t.Fatalf("kind %d error %v", k, err)
			}
			return
		}
		if _, err := toJSON(v, 0, new(int)); err != nil {
			t.Fatalf("result %#v is not JSON: %v", v, err)
		}
	})
}
