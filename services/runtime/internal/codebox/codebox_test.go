package codebox

import (
	"context"
	"errors"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/assayhq/assay/pkg/errs"
)

func run(t testing.TB, lim Limits, c Call) (any, error) {
	t.Helper()
	if c.Function == "" {
		c.Function = "evaluate"
	}
	return Run(context.Background(), lim, c)
}

// wantCode checks err is a 422 with the given code whose message holds each
// of the fragments.
func wantCode(t *testing.T, err error, code string, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want %s", code)
	}
	e := errs.From(err)
	if e.Kind != errs.Unprocessable || e.Code != code {
		t.Fatalf("error %v (kind %d); want 422 %s", err, e.Kind, code)
	}
	for _, f := range fragments {
		if !strings.Contains(e.Msg, f) {
			t.Errorf("message %q lacks %q", e.Msg, f)
		}
	}
}

func TestJavaScriptResults(t *testing.T) {
	cases := []struct {
		name string
		call Call
		want any
	}{
		{"positional JSON args", Call{Code: "function evaluate(a, b, c) { return {sum: a + b.x, first: c[0], none: b.y === undefined} }",
			Args: []any{1, map[string]any{"x": 2.5}, []any{"q"}}}, map[string]any{"sum": 3.5, "first": "q", "none": true}},
		{"number", Call{Code: "function evaluate() { return 0.75 }"}, 0.75},
		{"boolean", Call{Code: "function evaluate() { return false }"}, false},
		{"undefined is null", Call{Code: "function evaluate() {}"}, nil},
		{"NaN and Infinity are null", Call{Code: "function evaluate() { return [NaN, Infinity, -0] }"}, []any{nil, nil, 0.0}},
		{"dates as toJSON writes them", Call{Code: "function evaluate() { return new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6)) }"}, "2024-01-02T03:04:05.006Z"},
		{"functions dropped", Call{Code: "function evaluate() { return {a: 1, f() {}, l: [() => 1]} }"}, map[string]any{"a": 1.0, "l": []any{nil}}},
		{"async function", Call{Code: "async function evaluate(x) { const y = await Promise.resolve(x); return y * 2 }", Args: []any{4}}, 8.0},
		{"arrow const", Call{Code: "const evaluate = (s) => s.toUpperCase()", Args: []any{"ab"}}, "AB"},
		{"module.exports", Call{Code: "module.exports = { evaluate: (a) => a + 1 }", Args: []any{1}}, 2.0},
		{"export function", Call{Code: "export function evaluate(a) { return a * 3 }", Args: []any{2}}, 6.0},
		{"console is there and silent", Call{Code: "function evaluate() { console.log('x'); console.error('y'); return 1 }"}, 1.0},
		{"main", Call{Code: "function main(i) { return i.q }", Function: "main", Args: []any{map[string]any{"q": "z"}}}, "z"},
		{"typescript", Call{Runtime: TypeScript, Code: `
interface Out { score: number; success: boolean }
export function evaluate(inputs: Record<string, unknown>, outputs: string, trace?: unknown): Out {
  const want = String(inputs?.correct_answer ?? "")
  const score: number = outputs === want ? 1 : 0
  return { score, success: score >= 0.5 }
}`, Args: []any{map[string]any{"correct_answer": "Paris"}, "Paris", nil}}, map[string]any{"score": 1.0, "success": true}},
		{"typescript enum and class", Call{Runtime: TypeScript, Code: `
enum K { A = 2 }
class C { constructor(private n: number) {} twice(): number { return this.n * K.A } }
function evaluate(n: number): number { return new C(n).twice() }`, Args: []any{5}}, 10.0},
		{"guarded builtins still work", Call{Code: `function evaluate() {
  const a = [3, 1, 2].sort().map(x => x * 2).filter(x => x > 2)
  return [a.join('-'), String([1, [2, [3]]]), JSON.stringify({a, s: 'x'.repeat(3).padStart(5, '.')}),
          [[1], [2, [3]]].flat(Infinity).length, 'a,b'.split(','), 'aXbX'.replaceAll('X', '--'), ''.concat('p', 'q'),
          Array.from({length: 3}, (_, i) => i), JSON.stringify({k: 1, d: 2}, (k, v) => k === 'd' ? undefined : v)]
}`}, []any{"4-6", "1,2,3", `{"a":[4,6],"s":"..xxx"}`, 3.0, []any{"a", "b"}, "a--b--", "pq", []any{0.0, 1.0, 2.0}, `{"k":1}`}},
		{"cyclic join is empty", Call{Code: "function evaluate() { const a = [1, 2]; a.push(a); return a.join(';') }"}, "1;2;"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := run(t, Limits{}, c.call)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %#v; want %#v", got, c.want)
			}
		})
	}
}

func TestJavaScriptHasNoIO(t *testing.T) {
	got, err := run(t, Limits{}, Call{Code: `function evaluate() {
  return [typeof require, typeof fetch, typeof process, typeof setTimeout, typeof setInterval, typeof XMLHttpRequest,
          typeof WebSocket, typeof Deno, typeof Bun, typeof ArrayBuffer, typeof Uint8Array, typeof SharedArrayBuffer,
          typeof WeakRef, typeof WebAssembly, typeof importScripts]
}`})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got.([]any) {
		if v != "undefined" {
			t.Errorf("global %d is %v, want undefined", i, v)
		}
	}
	_, err = run(t, Limits{}, Call{Code: "function evaluate() { return require('fs').readFileSync('/etc/passwd') }"})
	wantCode(t, err, "runtime.code_error", "ReferenceError", "require")
	_, err = run(t, Limits{}, Call{Code: "import fs from 'fs'; export function evaluate() { return fs }"})
	if err == nil {
		t.Fatal("an import ran")
	}
}

func TestJavaScriptErrors(t *testing.T) {
	cases := []struct {
		name      string
		call      Call
		code      string
		fragments []string
	}{
		{"syntax", Call{Code: "function evaluate( {"}, "runtime.code_compile", []string{"SyntaxError"}},
		{"typescript syntax", Call{Runtime: TypeScript, Code: "function evaluate(a: ) {}"}, "runtime.code_compile", []string{"line 1"}},
		{"throw", Call{Code: "function evaluate() {\n  throw new TypeError('bad input')\n}"}, "runtime.code_error", []string{"TypeError: bad input", "line 2"}},
		{"throw a string", Call{Code: "function evaluate() { throw 'plain' }"}, "runtime.code_error", []string{"plain"}},
		{"rejected promise", Call{Code: "async function evaluate() { throw new Error('later') }"}, "runtime.code_error", []string{"rejected", "later"}},
		{"pending promise", Call{Code: "function evaluate() { return new Promise(() => {}) }"}, "runtime.code_error", []string{"never settled"}},
		{"no such function", Call{Code: "function other() {}"}, "runtime.code_function", []string{"no function evaluate"}},
		{"not a function", Call{Code: "var evaluate = 3"}, "runtime.code_function", nil},
		{"bad function name", Call{Code: "function f() {}", Function: "f()"}, "runtime.code_function", []string{"not an identifier"}},
		{"unknown runtime", Call{Runtime: "ruby", Code: "def x; end"}, "runtime.code_runtime", []string{"ruby"}},
		{"empty code", Call{Code: "  \n"}, "runtime.code_empty", nil},
		{"code too large", Call{Code: "//" + strings.Repeat("x", MaxCodeBytes)}, "runtime.code_too_large", nil},
		{"stack overflow", Call{Code: "function f(n) { return f(n + 1) + 1 }\nfunction evaluate() { return f(0) }"}, "runtime.code_error", []string{"call stack"}},
		{"BigInt result", Call{Code: "function evaluate() { return 10n }"}, "runtime.code_result", []string{"BigInt"}},
		{"result too large", Call{Code: "function evaluate() { return 'x'.repeat(2 << 20) }"}, "runtime.code_result", []string{"over"}},
		{"cyclic result", Call{Code: "function evaluate() { const o = {}; o.o = o; return o }"}, "runtime.code_result", []string{"deeper"}},
		{"long message is bounded", Call{Code: "function evaluate() { throw new Error('m'.repeat(100000)) }"}, "runtime.code_error", []string{"…"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := run(t, Limits{}, c.call)
			wantCode(t, err, c.code, c.fragments...)
			if n := len([]rune(errs.From(err).Msg)); n > maxMessageRunes+1 {
				t.Errorf("message of %d runes", n)
			}
		})
	}
}

func TestJavaScriptTimeLimit(t *testing.T) {
	for _, code := range []string{
		"function evaluate() { while (true) {} }",
		"function evaluate() { [1, 2].map(() => { for (;;) {} }) }",
		"while (true) {}\nfunction evaluate() {}", // at definition time
		"async function evaluate() { for (;;) { await null } }",
		// A backtracking pattern (the lookahead sends it to regexp2): one
		// native call that Interrupt cannot stop, answered by the grace.
		"function evaluate() { return /^(a+)+(?=c)$/.test('a'.repeat(40) + 'b') }",
	} {
		start := time.Now()
		lim := Limits{Timeout: 200 * time.Millisecond}
		_, err := run(t, lim, Call{Code: code})
		wantCode(t, err, "runtime.code_time_limit", "200ms")
		// Stopped by the limit, not by something later: within the limit
		// and the grace Run gives a native call, with room for a slow CI.
		if d := time.Since(start); d > lim.Timeout+grace+2*time.Second {
			t.Errorf("%q stopped after %s", code, d)
		}
	}
}

func TestJavaScriptContextCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := Run(ctx, Limits{Timeout: time.Minute}, Call{Code: "function evaluate() { for (;;) {} }", Function: "evaluate"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v; want the context's error", err)
	}
}

func TestJavaScriptMemoryLimit(t *testing.T) {
	// Allocations the code makes step by step: the heap watch stops them.
	for name, code := range map[string]string{
		"big strings":   "function evaluate() { let a = []; while (true) a.push('x'.repeat(1e6)) }",
		"doubling":      "function evaluate() { let s = 'x'; while (true) s = s + s }",
		"small objects": "function evaluate() { const a = []; for (let i = 0; ; i++) a.push({i, s: 'abcdefgh'.repeat(16), t: [i, i]}) }",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := run(t, Limits{Timeout: 60 * time.Second, MemBytes: 32 << 20}, Call{Code: code})
			wantCode(t, err, "runtime.code_memory_limit", "32 MiB")
		})
	}
}

func TestJavaScriptGuardedBuiltins(t *testing.T) {
	// One native call that would build more than the limit is refused
	// before it allocates (a Go call cannot be interrupted).
	for _, code := range []string{
		"'x'.repeat(1e10)",
		"'x'.padStart(1e10)",
		"'x'.padEnd(2e9, 'yz')",
		"Array(1e5).fill('x'.repeat(1e4)).join('')",
		"Array(4e7).join('ab')",
		"JSON.stringify(Array(1e5).fill('x'.repeat(1e4)))",
		"JSON.stringify(Array(1e5).fill('x'.repeat(1e4)), (k, v) => v)",
		"''.concat(...Array(1000).fill('x'.repeat(1e5)))",
		"'x'.repeat(1e5).replaceAll('x', 'y'.repeat(1e4))",
		"'x'.repeat(1e7).split('')",
		"Array.from({length: 1e9})",
		"(() => { const a = []; a.length = 1e9; return a.fill(0) })()",
		"(() => { const a = []; a.length = 1e9; return a.map(x => x) })()",
		"(() => { const b = Array(1e4).fill(1); return Array(1e4).fill(b).flat() })()",
		"(() => { const a = []; a.push(a); return a.flat(Infinity) })()",
		"[].concat(Object.assign([], {length: 1e9}))",
	} {
		t.Run(code, func(t *testing.T) {
			_, err := run(t, Limits{Timeout: 10 * time.Second, MemBytes: 16 << 20},
				Call{Code: "function evaluate() { return " + code + " }"})
			wantCode(t, err, "runtime.code_error", "RangeError", "memory limit (16 MiB)")
		})
	}
	_, err := run(t, Limits{}, Call{Code: "function evaluate() { return JSON.stringify({a: 1}, ['a']) }"})
	wantCode(t, err, "runtime.code_error", "array replacer")
}

func TestPythonAbsent(t *testing.T) {
	saved := lookPython
	lookPython = func() (string, error) { return "", exec.ErrNotFound }
	defer func() { lookPython = saved }()
	_, err := run(t, Limits{}, Call{Runtime: Python, Code: "def evaluate(): return 1"})
	wantCode(t, err, "runtime.python_unavailable", "Python is not available on this runtime")
}

func needPython(t *testing.T) {
	t.Helper()
	if _, err := lookPython(); err != nil {
		t.Skip("python3 is not on PATH: the Python runtime answers 422 here (TestPythonAbsent covers that)")
	}
}

func TestPython(t *testing.T) {
	needPython(t)
	got, err := run(t, Limits{}, Call{Runtime: Python, Code: `
import json, math
def evaluate(inputs, outputs, trace):
    print("noise on stdout", {"result": 666})
    return {"score": 1.0 if outputs == inputs["correct_answer"] else 0.0, "n": len(inputs), "t": trace, "u": "é"}
`, Args: []any{map[string]any{"correct_answer": "x"}, "x", nil}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"score": 1.0, "n": 1.0, "t": nil, "u": "é"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v; want %#v", got, want)
	}
	for _, c := range []struct {
		name, code, errCode string
		fragments           []string
	}{
		{"syntax", "def evaluate(:\n", "runtime.code_compile", []string{"line 1"}},
		{"raise", "def evaluate():\n    x = 1\n    raise ValueError('bad value')\n", "runtime.code_error", []string{"ValueError: bad value", "line 3"}},
		{"no function", "x = 1\n", "runtime.code_function", []string{"no function evaluate"}},
		{"not JSON", "def evaluate():\n    return {1, 2}\n", "runtime.code_result", []string{"JSON"}},
		{"NaN", "def evaluate():\n    return float('nan')\n", "runtime.code_result", nil},
		{"exit", "import os\ndef evaluate():\n    os._exit(3)\n", "runtime.code_error", []string{"without a result"}},
		{"too large", "def evaluate():\n    return 'x' * (2 << 20)\n", "runtime.code_result", []string{"over"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := run(t, Limits{}, Call{Runtime: Python, Code: c.code})
			wantCode(t, err, c.errCode, c.fragments...)
		})
	}
}

func TestPythonLimits(t *testing.T) {
	needPython(t)
	start := time.Now()
	_, err := run(t, Limits{Timeout: 500 * time.Millisecond}, Call{Runtime: Python, Code: "def evaluate():\n    while True:\n        pass\n"})
	wantCode(t, err, "runtime.code_time_limit", "500ms")
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("stopped after %s", d)
	}
	// A child the code forks dies with its group.
	_, err = run(t, Limits{Timeout: 500 * time.Millisecond}, Call{Runtime: Python, Code: "import os, time\ndef evaluate():\n    if os.fork() == 0:\n        time.sleep(60)\n    time.sleep(60)\n"})
	wantCode(t, err, "runtime.code_time_limit")

	_, err = run(t, Limits{Timeout: 20 * time.Second, MemBytes: 32 << 20}, Call{Runtime: Python, Code: "def evaluate():\n    a = []\n    while True:\n        a.append('x' * 1000000)\n"})
	wantCode(t, err, "runtime.code_memory_limit", "32 MiB")
}

func TestPythonCancel(t *testing.T) {
	needPython(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := Run(ctx, Limits{Timeout: time.Minute}, Call{Runtime: Python, Code: "import time\ndef evaluate():\n    time.sleep(60)\n", Function: "evaluate"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v; want the context's error", err)
	}
}

var benchCode = `function evaluate(inputs, outputs, trace) {
  const want = String(inputs.correct_answer).trim().toLowerCase()
  const got = String(outputs).trim().toLowerCase()
  const score = got === want ? 1 : 0
  return { score, success: score >= 0.5 }
}`

func BenchmarkJavaScriptEvaluate(b *testing.B) {
	call := Call{Code: benchCode, Function: "evaluate", Args: []any{map[string]any{"correct_answer": "Paris", "country": "France"}, "paris", nil}}
	for b.Loop() {
		if _, err := Run(context.Background(), Limits{}, call); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTypeScriptEvaluate(b *testing.B) {
	code := strings.Replace(benchCode, "function evaluate(inputs, outputs, trace)", "function evaluate(inputs: {correct_answer: string}, outputs: unknown, trace?: unknown): {score: number, success: boolean}", 1)
	call := Call{Runtime: TypeScript, Code: code, Function: "evaluate", Args: []any{map[string]any{"correct_answer": "Paris"}, "paris", nil}}
	for b.Loop() {
		if _, err := Run(context.Background(), Limits{}, call); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTypeScriptCold transforms and compiles every time (new source),
// the cost of a first call with new code.
func BenchmarkTypeScriptCold(b *testing.B) {
	i := 0
	for b.Loop() {
		i++
		code := "function evaluate(a: number): number { return a + " + strings.Repeat("1+", i%50) + "0 }\n// " + time.Now().String()
		if _, err := Run(context.Background(), Limits{}, Call{Runtime: TypeScript, Code: code, Function: "evaluate", Args: []any{1}}); err != nil {
			b.Fatal(err)
		}
	}
}
