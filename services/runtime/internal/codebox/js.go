package codebox

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"sync"
	"time"

	"github.com/dop251/goja"
	"github.com/evanw/esbuild/pkg/api"

	"github.com/assayhq/assay/pkg/errs"
)

// The JavaScript sandbox. A fresh goja runtime per run, with no I/O: goja
// has no require, fetch, process, timers or file access unless the host
// adds them, and this host adds only a console whose output is discarded.
// The binary-data globals (ArrayBuffer, typed arrays, DataView) and the GC
// observers (WeakRef, FinalizationRegistry) are removed: an evaluator has
// no use for them and typed arrays allocate their whole length in one call.
//
// The builtins that could allocate more than the memory limit within one
// uninterruptible native call are guarded (installGuards): a string over
// MemBytes/2 characters or an array over MemBytes/16 elements is refused
// with a RangeError before it is built. Everything else allocates step by
// step and is stopped by the heap watch (memwatch.go).

// Interrupt reasons, told apart when the run comes back interrupted.
type interruptReason int

const (
	byTime interruptReason = iota + 1
	byMemory
	byContext
)

// grace is how long Run waits, past the time limit, for a run stuck in a
// native call to notice its interrupt before answering without it.
const grace = 250 * time.Millisecond

// maxCallStack bounds recursion; deeper is a RangeError, not a Go stack
// exhausting memory.
const maxCallStack = 2000

// regexp2 (goja's engine for backtracking regular expressions) runs a
// match as one native call that Interrupt cannot stop, so a catastrophic
// pattern is bounded by the engine's own time-out instead.
func init() { setRegexpTimeout() }

var moduleRe = regexp.MustCompile(`\b(export|import)\b`)

// programs caches compiled programs by source: an evaluator runs the same
// code for every testcase. Bounded; flushed whole when full.
var programs = struct {
	sync.Mutex
	m map[[32]byte]*goja.Program
}{m: map[[32]byte]*goja.Program{}}

const maxPrograms = 256

func compile(code string, ts bool) (*goja.Program, error) {
	key := sha256.Sum256([]byte(fmt.Sprint(ts, "\x00", code)))
	programs.Lock()
	p := programs.m[key]
	programs.Unlock()
	if p != nil {
		return p, nil
	}
	src := code
	if ts || moduleRe.MatchString(code) {
		loader := api.LoaderJS
		if ts {
			loader = api.LoaderTS
		}
		// CommonJS, so `export function evaluate` lands on module.exports
		// and plain top-level functions stay global.
		res := api.Transform(code, api.TransformOptions{
			Loader: loader, Format: api.FormatCommonJS, Target: api.ES2017, Sourcefile: "code",
		})
		if len(res.Errors) > 0 {
			m := res.Errors[0]
			if m.Location != nil {
				return nil, codeError("runtime.code_compile", fmt.Sprintf("line %d, column %d: %s", m.Location.Line, m.Location.Column, m.Text))
			}
			return nil, codeError("runtime.code_compile", m.Text)
		}
		src = string(res.Code)
	}
	p, err := goja.Compile("code", src, false)
	if err != nil {
		return nil, codeError("runtime.code_compile", err.Error())
	}
	programs.Lock()
	if len(programs.m) >= maxPrograms {
		programs.m = map[[32]byte]*goja.Program{}
	}
	programs.m[key] = p
	programs.Unlock()
	return p, nil
}

func runJSHere(ctx context.Context, lim Limits, call Call, ts bool) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	args, err := json.Marshal(orEmpty(call.Args))
	if err != nil {
		return nil, errs.Message(errs.Unprocessable, "runtime.code_args", "arguments are not JSON: "+err.Error(), nil)
	}

	vm := goja.New()
	vm.SetMaxCallStackSize(maxCallStack)
	type outcome struct {
		v   any
		err error
	}
	ch := make(chan outcome, 1)
	timer := time.AfterFunc(lim.Timeout, func() { vm.Interrupt(byTime) })
	defer timer.Stop()
	stopCtx := context.AfterFunc(ctx, func() { vm.Interrupt(byContext) })
	defer stopCtx()
	stopWatch := watchHeap(lim.MemBytes, func() { vm.Interrupt(byMemory) })

	go func() {
		defer func() {
			if r := recover(); r != nil {
				// goja turns JavaScript faults into errors; a panic here is
				// a Go fault inside a builtin, reported as the code's.
				ch <- outcome{err: codeError("runtime.code_error", fmt.Sprint("internal error in a builtin: ", r))}
			}
		}()
		// Compiled here, under the time limit too: the parsers are not
		// ours to trust with hostile source.
		prg, err := compile(call.Code, ts)
		if err != nil {
			ch <- outcome{err: err}
			return
		}
		v, err := execute(vm, prg, call.Function, args, lim)
		ch <- outcome{v, err}
	}()

	var o outcome
	select {
	case o = <-ch:
		stopWatch()
	case <-time.After(lim.Timeout + grace):
		// Stuck in a native call past its interrupt: answer now; the
		// goroutine ends when the call returns, its heap watched until
		// then.
		vm.Interrupt(byTime)
		go func() {
			<-ch
			stopWatch()
		}()
		return nil, timeLimit(lim)
	}
	if o.err == nil {
		return o.v, nil
	}
	var ie *goja.InterruptedError
	if errors.As(o.err, &ie) {
		switch ie.Value() {
		case byMemory:
			return nil, memLimit(lim)
		case byContext:
			return nil, ctx.Err()
		default:
			return nil, timeLimit(lim)
		}
	}
	var ee *errs.Error
	if errors.As(o.err, &ee) {
		return nil, ee
	}
	return nil, codeError("runtime.code_error", jsMessage(o.err))
}

// jsMessage is a thrown value's text and where in the user's code it was
// thrown, without goja's native frames (which name Go functions).
func jsMessage(err error) string {
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		return fmt.Sprintf("RangeError: maximum call stack size exceeded (%d frames)%s", maxCallStack, where(so.Stack()))
	}
	var ex *goja.Exception
	if errors.As(err, &ex) && ex.Value() != nil {
		return ex.Value().String() + where(ex.Stack())
	}
	return err.Error()
}

func where(stack []goja.StackFrame) string {
	for _, f := range stack {
		if f.SrcName() == "code" {
			p := f.Position()
			return fmt.Sprintf(" at line %d, column %d", p.Line, p.Column)
		}
	}
	return ""
}

// execute runs the program, calls the function and exports its result.
func execute(vm *goja.Runtime, prg *goja.Program, fn string, args []byte, lim Limits) (any, error) {
	if err := setupGlobals(vm, lim); err != nil {
		return nil, err
	}
	if _, err := vm.RunProgram(prg); err != nil {
		return nil, err
	}
	f, err := lookup(vm, fn)
	if err != nil {
		return nil, err
	}
	parsed, err := vm.RunString("JSON.parse")
	if err != nil {
		return nil, err
	}
	parse, _ := goja.AssertFunction(parsed)
	argv, err := parse(goja.Undefined(), vm.ToValue(string(args)))
	if err != nil {
		return nil, err
	}
	arr := argv.ToObject(vm)
	n := int(arr.Get("length").ToInteger())
	callArgs := make([]goja.Value, n)
	for i := range callArgs {
		callArgs[i] = arr.Get(fmt.Sprint(i))
	}
	v, err := f(goja.Undefined(), callArgs...)
	if err != nil {
		return nil, err
	}
	// An async function's promise has settled by now if it ever will:
	// goja runs the job queue when the outermost call returns, and the
	// sandbox has no timers or I/O to settle it later.
	if o, ok := v.(*goja.Object); ok {
		if p, ok := o.Export().(*goja.Promise); ok {
			switch p.State() {
			case goja.PromiseStateFulfilled:
				v = p.Result()
			case goja.PromiseStateRejected:
				return nil, codeError("runtime.code_error", fmt.Sprintf("%s rejected: %s", fn, p.Result().String()))
			default:
				return nil, codeError("runtime.code_error", fn+" returned a promise that never settled")
			}
		}
	}
	if v == nil {
		return nil, nil
	}
	var out any
	if ex := vm.Try(func() { out, err = toJSON(v.Export(), 0, new(int)) }); ex != nil {
		return nil, ex
	}
	return out, err
}

// lookup finds fn as a global or on module.exports (CommonJS code, and
// ES module code after esbuild's transform).
func lookup(vm *goja.Runtime, fn string) (goja.Callable, error) {
	if f, ok := goja.AssertFunction(vm.Get(fn)); ok {
		return f, nil
	}
	if m := vm.Get("module"); m != nil {
		if exp := m.ToObject(vm).Get("exports"); exp != nil && !goja.IsUndefined(exp) && !goja.IsNull(exp) {
			if f, ok := goja.AssertFunction(exp.ToObject(vm).Get(fn)); ok {
				return f, nil
			}
		}
	}
	return nil, codeError("runtime.code_function", fmt.Sprintf("the code defines no function %s", fn))
}

const maxDepth = 100

// toJSON normalises an exported goja value to JSON types, as
// JSON.stringify would write it, within MaxResultBytes.
func toJSON(v any, depth int, size *int) (any, error) {
	if depth > maxDepth {
		return nil, codeError("runtime.code_result", fmt.Sprintf("the result nests deeper than %d levels (a cycle?)", maxDepth))
	}
	*size += 8
	if *size > MaxResultBytes {
		return nil, codeError("runtime.code_result", fmt.Sprintf("the result is over %d bytes", MaxResultBytes))
	}
	switch x := v.(type) {
	case nil, bool:
		return x, nil
	case int64:
		return float64(x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, nil
		}
		return x, nil
	case string:
		*size += len(x)
		if *size > MaxResultBytes {
			return nil, codeError("runtime.code_result", fmt.Sprintf("the result is over %d bytes", MaxResultBytes))
		}
		return x, nil
	case time.Time:
		return x.UTC().Format("2006-01-02T15:04:05.000Z"), nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			if isFunc(e) {
				out[i] = nil // JSON.stringify writes null for a function in an array
				continue
			}
			j, err := toJSON(e, depth+1, size)
			if err != nil {
				return nil, err
			}
			out[i] = j
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if isFunc(e) {
				continue // and omits it from an object
			}
			*size += len(k)
			j, err := toJSON(e, depth+1, size)
			if err != nil {
				return nil, err
			}
			out[k] = j
		}
		return out, nil
	case *big.Int:
		return nil, codeError("runtime.code_result", "a BigInt in the result cannot be written as JSON")
	default:
		if isFunc(v) {
			return nil, nil
		}
		return nil, codeError("runtime.code_result", fmt.Sprintf("a %T in the result cannot be written as JSON", v))
	}
}

func isFunc(v any) bool {
	_, ok := v.(func(goja.FunctionCall) goja.Value)
	return ok
}

// setupGlobals removes what an evaluator must not have, adds the discarding
// console and module/exports, and guards the allocating builtins.
func setupGlobals(vm *goja.Runtime, lim Limits) error {
	g := vm.GlobalObject()
	for _, name := range []string{
		"ArrayBuffer", "SharedArrayBuffer", "DataView", "Atomics",
		"Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array",
		"Int32Array", "Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array",
		"WeakRef", "FinalizationRegistry",
	} {
		if err := g.Delete(name); err != nil {
			return err
		}
	}
	console := vm.NewObject()
	discard := func(goja.FunctionCall) goja.Value { return goja.Undefined() }
	for _, name := range []string{"log", "info", "warn", "error", "debug", "trace"} {
		if err := console.Set(name, discard); err != nil {
			return err
		}
	}
	if err := g.Set("console", console); err != nil {
		return err
	}
	module := vm.NewObject()
	exports := vm.NewObject()
	if err := module.Set("exports", exports); err != nil {
		return err
	}
	if err := g.Set("module", module); err != nil {
		return err
	}
	if err := g.Set("exports", exports); err != nil {
		return err
	}
	return installGuards(vm, lim)
}
