// Package codebox runs user code: JavaScript and TypeScript in an
// in-process goja sandbox (TypeScript through esbuild's transform) with a
// time limit, a memory limit and no I/O, and Python in a python3
// subprocess with a time limit when python3 exists. The custom code
// evaluator (auto_custom_code_run) and the code application
// (custom:code:v0) both run through it.
//
// This file is the contract; the bodies are filled in by the evaluators work.
package codebox

import (
	"context"
	"time"

	"github.com/assayhq/assay/pkg/errs"
)

// Limits bound one run.
type Limits struct {
	Timeout  time.Duration // default 5s
	MemBytes int64         // default 64 MiB (JavaScript heap estimate, Python RLIMIT_AS)
}

// Call is one function call in user code.
type Call struct {
	Runtime  string // "javascript" (default), "typescript" or "python"
	Code     string
	Function string // e.g. "evaluate" or "main"
	Args     []any  // JSON values, passed positionally
}

// Run defines Code, calls Function with Args and returns its JSON result.
// Code that does not compile or throws is errs.Unprocessable with the
// message; over the time limit errs.Unprocessable naming the limit; Python
// without python3 on the machine errs.Unprocessable saying so.
func Run(ctx context.Context, lim Limits, call Call) (any, error) {
	return nil, errs.New(errs.NotImplemented, "runtime.codebox", "code runs are not built yet")
}
