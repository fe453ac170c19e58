// Package codebox runs user code: JavaScript and TypeScript in goja
// (TypeScript through esbuild's transform) with a time limit, a memory
// limit and no I/O, and Python with `python3 -I -S -B`; both in a
// bubblewrap sandbox, JavaScript in a child process. The custom code
// evaluator (auto_custom_code_run) and the code application
// (custom:code:v0) both run through it.
//
// What the limits guarantee is written where they are enforced: sandbox.go
// (the sandbox both run in), jsbox.go (the JavaScript child), js.go (the
// JavaScript globals and the guarded builtins), memwatch.go (the heap
// watch) and python.go (the Python driver).
package codebox

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/assayhq/assay/pkg/errs"
)

// Limits bound one run.
type Limits struct {
	Timeout  time.Duration // default 5s
	MemBytes int64         // default 64 MiB (JavaScript heap watch, Python RLIMIT_AS)
}

// The defaults and hard bounds of a run. A result or a source over its cap
// is the user's fault (422), not the runtime's.
const (
	DefaultTimeout  = 5 * time.Second
	DefaultMemBytes = 64 << 20
	MaxCodeBytes    = 256 << 10 // source text
	MaxResultBytes  = 1 << 20   // the JSON result
	maxMessageRunes = 1000      // error messages quoted back to the caller
)

// withDefaults fills zero limits; negative ones are treated as zero.
func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MemBytes <= 0 {
		l.MemBytes = DefaultMemBytes
	}
	return l
}

// Call is one function call in user code.
type Call struct {
	Runtime  string // "javascript" (default), "typescript" or "python"
	Code     string
	Function string // e.g. "evaluate" or "main"
	Args     []any  // JSON values, passed positionally
}

// The runtimes Run accepts.
const (
	JavaScript = "javascript"
	TypeScript = "typescript"
	Python     = "python"
)

var identRe = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// Run defines Code, calls Function with Args and returns its JSON result
// (nil, bool, float64, string, []any or map[string]any; a JavaScript
// undefined, NaN or Infinity is nil, as JSON.stringify writes them).
// Code that does not compile or throws is errs.Unprocessable with the
// message; over the time or memory limit errs.Unprocessable naming the
// limit (the user's code is at fault, so it is a 4xx, not a 504); Python
// without python3 on the machine errs.Unprocessable saying so. A ctx
// cancelled by the caller stops the run and returns ctx's error.
func Run(ctx context.Context, lim Limits, call Call) (any, error) {
	lim = lim.withDefaults()
	if len(call.Code) > MaxCodeBytes {
		return nil, errs.Message(errs.Unprocessable, "runtime.code_too_large",
			fmt.Sprintf("code is %d bytes; the limit is %d", len(call.Code), MaxCodeBytes), nil)
	}
	if strings.TrimSpace(call.Code) == "" {
		return nil, errs.Message(errs.Unprocessable, "runtime.code_empty", "code is empty", nil)
	}
	if !identRe.MatchString(call.Function) {
		return nil, errs.Message(errs.Unprocessable, "runtime.code_function",
			fmt.Sprintf("function name %q is not an identifier", bound(call.Function, 100)), nil)
	}
	switch call.Runtime {
	case "", JavaScript:
		return runJS(ctx, lim, call, false)
	case TypeScript:
		return runJS(ctx, lim, call, true)
	case Python:
		return runPython(ctx, lim, call)
	default:
		return nil, errs.Message(errs.Unprocessable, "runtime.code_runtime",
			fmt.Sprintf("runtime %q is not one of javascript, typescript, python", bound(call.Runtime, 100)), nil)
	}
}

// codeError is the 422 of code that fails on its own: a compile error, a
// throw, a bad result.
func codeError(code, msg string) error {
	return errs.Message(errs.Unprocessable, code, bound(msg, maxMessageRunes), nil)
}

// timeLimit and memLimit name the limit a run went over.
func timeLimit(lim Limits) error {
	return errs.Message(errs.Unprocessable, "runtime.code_time_limit",
		fmt.Sprintf("code ran longer than the time limit of %s", lim.Timeout), map[string]any{"limit": lim.Timeout.String()})
}

func memLimit(lim Limits) error {
	return errs.Message(errs.Unprocessable, "runtime.code_memory_limit",
		fmt.Sprintf("code used more than the memory limit of %d MiB", lim.MemBytes>>20), map[string]any{"limit_bytes": lim.MemBytes})
}

// bound cuts s to n runes, marking the cut.
func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
