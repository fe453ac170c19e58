package codebox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/assayhq/assay/pkg/errs"
)

// Python runs in a python3 subprocess: `python3 -I -S` (isolated: no
// PYTHON* environment, no user site, no site module, no current directory
// on sys.path), an empty environment, a fresh temporary directory as the
// working directory, and its own process group, killed whole on the time
// limit or the caller's cancellation. The driver reads the code, the
// function name and the JSON arguments from stdin, then sets RLIMIT_AS to
// the memory limit (plus the interpreter's own footprint, measured at
// that moment) and RLIMIT_CPU to the time limit before it compiles the
// user's code, and writes one JSON line to a copy of stdout it took before
// pointing stdout at stderr, so the code's print() cannot forge a result.
// Output is capped.
//
// Unlike the JavaScript sandbox this is not an I/O sandbox: Python code
// can open files and sockets with the runtime process's user rights. The
// operator who installs python3 next to the runtime accepts that; without
// python3 the Python runtime is refused with a 422.

// lookPython finds the interpreter; a variable so tests can take it away.
var lookPython = func() (string, error) { return exec.LookPath("python3") }

const driver = `
import sys, json, os, resource
req = json.loads(sys.stdin.read())
out = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
sys.stdout = sys.stderr
def reply(obj):
    out.write(json.dumps(obj, allow_nan=False))
    out.flush()
    os._exit(0)
try:
    with open("/proc/self/statm") as f:
        vsz = int(f.read().split()[0]) * resource.getpagesize()
except Exception:
    vsz = 64 << 20
lim = vsz + req["mem"]
resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
cpu = req["cpu"]
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
try:
    ns = {"__name__": "__main__", "__builtins__": __builtins__}
    exec(compile(req["code"], "code.py", "exec"), ns)
    fn = ns.get(req["function"])
    if not callable(fn):
        reply({"error": "the code defines no function " + req["function"], "kind": "function"})
    result = fn(*req["args"])
    try:
        text = json.dumps({"result": result}, allow_nan=False)
    except (TypeError, ValueError) as e:
        reply({"error": "the result cannot be written as JSON: " + str(e), "kind": "result"})
    out.write(text)
    out.flush()
    os._exit(0)
except MemoryError:
    reply({"error": "memory", "kind": "memory"})
except SyntaxError as e:
    reply({"error": "line %s: %s" % (e.lineno, e.msg), "kind": "compile"})
except BaseException as e:
    import traceback
    tb = traceback.extract_tb(e.__traceback__)
    where = ""
    for fr in tb:
        if fr.filename == "code.py":
            where = " (line %d)" % fr.lineno
    reply({"error": "%s: %s%s" % (type(e).__name__, e, where), "kind": "error"})
`

// cappedBuffer keeps the first max bytes written and counts the rest.
type cappedBuffer struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room < len(p) {
		c.over = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}

func runPython(ctx context.Context, lim Limits, call Call) (any, error) {
	py, err := lookPython()
	if err != nil {
		return nil, errs.Message(errs.Unprocessable, "runtime.python_unavailable",
			"Python is not available on this runtime (no python3 on its PATH); use javascript or typescript", nil)
	}
	cpu := int64(lim.Timeout/time.Second) + 1
	in, err := json.Marshal(map[string]any{
		"code": call.Code, "function": call.Function, "args": orEmpty(call.Args),
		"mem": lim.MemBytes, "cpu": cpu,
	})
	if err != nil {
		return nil, errs.Message(errs.Unprocessable, "runtime.code_args", "arguments are not JSON: "+err.Error(), nil)
	}
	dir, err := os.MkdirTemp("", "codebox-py-")
	if err != nil {
		return nil, fmt.Errorf("codebox: python work dir: %w", err)
	}
	defer os.RemoveAll(dir)

	runCtx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, py, "-I", "-S", "-c", driver)
	cmd.Dir = dir
	cmd.Env = []string{"PYTHONDONTWRITEBYTECODE=1", "PYTHONIOENCODING=utf-8"}
	cmd.Stdin = bytes.NewReader(in)
	stdout := &cappedBuffer{max: MaxResultBytes + 64}
	stderr := &cappedBuffer{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// The whole group: code that forks must not outlive its run.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = time.Second
	runErr := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // leftovers of a run that returned
	}

	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if runCtx.Err() != nil {
		return nil, timeLimit(lim)
	}
	if stdout.over {
		return nil, codeError("runtime.code_result", fmt.Sprintf("the result is over %d bytes", MaxResultBytes))
	}
	var reply struct {
		Result any     `json:"result"`
		Error  *string `json:"error"`
		Kind   string  `json:"kind"`
	}
	if stdout.buf.Len() == 0 || json.Unmarshal(stdout.buf.Bytes(), &reply) != nil {
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				switch ws.Signal() {
				case syscall.SIGXCPU, syscall.SIGKILL:
					return nil, timeLimit(lim)
				}
			}
		}
		// No reply: the interpreter died before the driver could answer
		// (memory exhausted while starting, killed, os._exit in the code).
		return nil, codeError("runtime.code_error", "the Python process ended without a result: "+stderrTail(stderr, runErr))
	}
	if reply.Error != nil {
		switch reply.Kind {
		case "memory":
			return nil, memLimit(lim)
		case "compile":
			return nil, codeError("runtime.code_compile", *reply.Error)
		case "function":
			return nil, codeError("runtime.code_function", *reply.Error)
		case "result":
			return nil, codeError("runtime.code_result", *reply.Error)
		default:
			return nil, codeError("runtime.code_error", *reply.Error)
		}
	}
	return reply.Result, nil
}

func orEmpty(a []any) []any {
	if a == nil {
		return []any{}
	}
	return a
}

func stderrTail(b *cappedBuffer, err error) string {
	s := b.buf.String()
	if s == "" && err != nil {
		s = err.Error()
	}
	if len(s) > 500 {
		s = s[len(s)-500:]
	}
	return s
}
