package codebox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/assayhq/assay/pkg/errs"
)

// JavaScript and TypeScript run in goja (js.go) in a child process in the
// sandbox (sandbox.go), so that what the guards and the heap watch do not
// catch is bounded by the kernel, and a goja or esbuild bug reaches nothing
// of the runtime's: the child is the runtime's own executable (in tests,
// the test binary) started with jsChildArg, which the init below turns
// into the child before anything else of the program runs. Its one
// request comes on stdin and its one reply goes to stdout, both JSON.
//
// The child keeps the in-process semantics (the time limit and the heap
// watch answer with the same errors) and adds kernel limits: RLIMIT_DATA
// at a few times the memory limit (the heap watch stops code well before;
// this stops what it does not see), RLIMIT_CPU just past the time limit,
// RLIMIT_NPROC (the Go runtime's threads count; JavaScript cannot start a
// process), no file writes.

const jsChildArg = "--assay-codebox-javascript-child"

// sandboxExe is where the executable is inside the sandbox.
const sandboxExe = "/codebox/assay"

// The child's own room (Go runtime, goja, esbuild) above its heap budget,
// its thread allowance, and the start-up time the parent waits for on top
// of the time limit and the native-call grace.
const (
	jsDataBase  = 256 << 20
	jsThreads   = 64
	jsStartWait = 2 * time.Second
)

func init() {
	if len(os.Args) == 2 && os.Args[1] == jsChildArg {
		os.Exit(jsChild(os.Stdin, os.Stdout))
	}
}

type jsRequest struct {
	Timeout  time.Duration   `json:"timeout"`
	MemBytes int64           `json:"mem"`
	TS       bool            `json:"ts"`
	Code     string          `json:"code"`
	Function string          `json:"function"`
	Args     json.RawMessage `json:"args"`
}

type jsReply struct {
	Result any       `json:"result"`
	Error  *errReply `json:"error,omitempty"`
}

// jsChild is the sandboxed side: one request, one reply.
func jsChild(in io.Reader, out io.Writer) int {
	var req jsRequest
	var rep jsReply
	if err := json.NewDecoder(in).Decode(&req); err != nil {
		rep.Error = &errReply{Kind: errs.Unprocessable, Code: "runtime.code_args", Msg: "bad request to the sandbox: " + err.Error()}
	} else {
		dec := json.NewDecoder(strings.NewReader(string(req.Args)))
		dec.UseNumber() // integers past 2^53 reach JSON.parse as written
		var args []any
		if err := dec.Decode(&args); err != nil {
			rep.Error = &errReply{Kind: errs.Unprocessable, Code: "runtime.code_args", Msg: "arguments are not JSON: " + err.Error()}
		} else if err := jsLimits(req); err != nil {
			fmt.Fprintln(os.Stderr, "codebox: limits:", err)
			return 3
		} else {
			v, err := runJSHere(context.Background(), Limits{Timeout: req.Timeout, MemBytes: req.MemBytes},
				Call{Code: req.Code, Function: req.Function, Args: args}, req.TS)
			if err != nil {
				e := errs.From(err)
				rep.Error = &errReply{Kind: e.Kind, Code: e.Code, Msg: e.Msg, Detail: e.Detail}
			} else {
				rep.Result = v
			}
		}
	}
	if err := json.NewEncoder(out).Encode(rep); err != nil {
		return 3
	}
	return 0
}

func jsLimits(req jsRequest) error {
	const rlimitNPROC = 6 // not in package syscall
	cpu := uint64((req.Timeout+grace)/time.Second) + 2
	data := uint64(jsDataBase + 4*req.MemBytes)
	if raceEnabled {
		data = ^uint64(0) // RLIM_INFINITY
	}
	for _, l := range []struct {
		what int
		n    uint64
	}{
		{syscall.RLIMIT_DATA, data},
		{syscall.RLIMIT_CPU, cpu},
		{rlimitNPROC, jsThreads},
		{syscall.RLIMIT_FSIZE, 0},
		{syscall.RLIMIT_NOFILE, 64},
		{syscall.RLIMIT_CORE, 0},
	} {
		if err := syscall.Setrlimit(l.what, &syscall.Rlimit{Cur: l.n, Max: l.n}); err != nil {
			return fmt.Errorf("rlimit %d: %w", l.what, err)
		}
	}
	return nil
}

func jsEnv(ctx context.Context) (*jail, error) {
	sandbox.Lock()
	p := sandbox.js
	sandbox.Unlock()
	return p.get(ctx)
}

func probeJS(ctx context.Context, cfg SandboxConfig) (*jail, error) {
	bw, err := findBwrap(cfg)
	if err != nil {
		return nil, unavailable(err.Error())
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return nil, unavailable("the runtime's executable: " + err.Error())
	}
	mounts, err := sharedMounts([]string{exe})
	if err != nil {
		return nil, unavailable(err.Error())
	}
	if raceEnabled {
		// Only a race-instrumented test binary: the race runtime sleeps a
		// second at exit by default (to let other goroutines report), and
		// without a /proc to read its own mappings from it starts a second
		// slower; every run would take two seconds more. The /proc is the
		// run's own PID namespace's.
		mounts = append(mounts, "--setenv", "GORACE", "atexit_sleep_ms=0", "--proc", "/proc")
	}
	j := &jail{bwrap: bw, mounts: mounts, argv: []string{sandboxExe, jsChildArg}}
	if credential() != nil && !worldReadable(exe) {
		// A root runtime's sandbox user cannot reach it (a test binary
		// under a private build folder): a copy per run instead of a bind.
		j.copy = exe
	} else {
		j.mounts = append(j.mounts, "--ro-bind", exe, sandboxExe)
	}
	v, err := j.callJS(ctx, Limits{Timeout: 10 * time.Second, MemBytes: DefaultMemBytes},
		Call{Code: "function probe() { return 1 }", Function: "probe"}, false)
	if err != nil {
		if e := errs.From(err); e.Code == "runtime.sandbox_unavailable" || ctx.Err() != nil {
			return nil, err
		}
		return nil, unavailable("the JavaScript child did not run: " + err.Error())
	}
	if v != 1.0 {
		return nil, unavailable(fmt.Sprintf("the JavaScript child answered %v to a probe", v))
	}
	return j, nil
}

// worldReadable is whether any user can reach and run path.
func worldReadable(path string) bool {
	for p := path; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return false
		}
		need := os.FileMode(0o001)
		if p == path {
			need = 0o005
		}
		if fi.Mode().Perm()&need != need {
			return false
		}
		if p == "/" {
			return true
		}
	}
}

func runJS(ctx context.Context, lim Limits, call Call, ts bool) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	j, err := jsEnv(ctx)
	if err != nil {
		return nil, err
	}
	return j.callJS(ctx, lim, call, ts)
}

func (j *jail) callJS(ctx context.Context, lim Limits, call Call, ts bool) (any, error) {
	args, err := marshal(orEmpty(call.Args))
	if err != nil {
		return nil, err
	}
	in, err := marshal(jsRequest{Timeout: lim.Timeout, MemBytes: lim.MemBytes, TS: ts, Code: call.Code, Function: call.Function, Args: args})
	if err != nil {
		return nil, err
	}
	o, err := j.run(ctx, lim.Timeout+grace+jsStartWait, in)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if o.timedOut {
		return nil, timeLimit(lim)
	}
	if o.stdout.over {
		return nil, codeError("runtime.code_result", fmt.Sprintf("the result is over %d bytes", MaxResultBytes))
	}
	var rep jsReply
	if o.stdout.buf.Len() == 0 || json.Unmarshal(o.stdout.buf.Bytes(), &rep) != nil {
		if outOfMemory(o.stderr) {
			return nil, memLimit(lim)
		}
		tail := stderrTail(o.stderr, o.err)
		var ee *exec.ExitError
		if errors.As(o.err, &ee) {
			switch ee.ExitCode() {
			case 128 + int(syscall.SIGXCPU), 128 + int(syscall.SIGKILL):
				return nil, timeLimit(lim)
			}
		}
		return nil, codeError("runtime.code_error", "the JavaScript process ended without a result: "+tail)
	}
	if rep.Error != nil {
		return nil, rep.Error.err()
	}
	return rep.Result, nil
}

// outOfMemory says whether the JavaScript process died for want of memory.
// The Go runtime names it on its first line ("fatal error: runtime: out of
// memory"), then prints every goroutine's stack, so the whole of what was
// kept is searched, not its tail (TestOutOfMemoryIsReadFromTheHead).
func outOfMemory(stderr *cappedBuffer) bool {
	b := stderr.buf.Bytes()
	return bytes.Contains(b, []byte("out of memory")) || bytes.Contains(b, []byte("cannot allocate memory"))
}
