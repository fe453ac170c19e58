package codebox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/assayhq/assay/pkg/errs"
)

// Python runs as `python3 -I -S -B` (isolated: no PYTHON* environment, no
// user site, no site module, no current directory on sys.path, no
// bytecode written) in the sandbox (sandbox.go). The driver reads the
// code, the function name, the JSON arguments and the limits from stdin,
// sets its kernel limits (RLIMIT_AS to the memory limit plus the
// interpreter's own footprint, measured by the probe; RLIMIT_CPU to the
// time limit; RLIMIT_NPROC, RLIMIT_FSIZE, RLIMIT_NOFILE) before it
// compiles the user's code, and writes one JSON line to a copy of stdout it
// took before pointing stdout at stderr, so the code's print() cannot
// forge a result. Output is capped. Without the interpreter the Python
// runtime is refused with runtime.python_unavailable; without a sandbox,
// with runtime.sandbox_unavailable.

// lookPython finds the interpreter (SandboxConfig.Python); a variable so
// tests can take it away.
var lookPython = func() (string, error) {
	sandbox.Lock()
	py := sandbox.cfg.Python
	sandbox.Unlock()
	return exec.LookPath(py)
}

// The footprint the probe could not measure, and the room the driver's own
// work needs on top of the interpreter's.
const (
	pythonBaseGuess = 64 << 20
	pythonSlack     = 16 << 20
	pythonFileBytes = 1 << 20 // RLIMIT_FSIZE: /tmp is 4 MiB anyway
)

const driver = `
import sys, json, os, resource
raw = sys.stdin.read()
req = json.loads(raw)
os.environ.clear()  # bwrap sets PWD; the code gets nothing
out = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
sys.stdout = sys.stderr
def reply(obj):
    out.write(json.dumps(obj, allow_nan=False))
    out.flush()
    os._exit(0)
def limit(what, n):
    resource.setrlimit(what, (n, n))
limit(resource.RLIMIT_AS, req["as"] + 8 * len(raw))
cpu = req["cpu"]
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
limit(resource.RLIMIT_NPROC, req["nproc"])
limit(resource.RLIMIT_FSIZE, req["fsize"])
limit(resource.RLIMIT_NOFILE, 64)
limit(resource.RLIMIT_CORE, 0)
del raw
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

// pythonInfo is what the probe asks the interpreter on the host: the
// directories of its standard library and its footprint once the driver's
// modules are loaded.
const pythonInfo = `
import sys, os, json, resource
try:
    with open("/proc/self/statm") as f:
        vsz = int(f.read().split()[0]) * resource.getpagesize()
except Exception:
    vsz = 0
print(json.dumps({"path": [p for p in sys.path if os.path.isdir(p)], "vsz": vsz}))
`

func pythonEnv(ctx context.Context) (*jail, error) {
	sandbox.Lock()
	p := sandbox.py
	sandbox.Unlock()
	return p.get(ctx)
}

func probePython(ctx context.Context, cfg SandboxConfig) (*jail, error) {
	bw, err := findBwrap(cfg)
	if err != nil {
		return nil, unavailable(err.Error())
	}
	py, err := lookPython()
	if err != nil {
		return nil, unavailable(err.Error())
	}
	real, err := filepath.EvalSymlinks(py)
	if err != nil {
		return nil, unavailable(err.Error())
	}
	// Our own fixed script, as the sandbox's user: an interpreter that
	// user cannot read fails here.
	cmd := exec.CommandContext(ctx, real, "-I", "-S", "-B", "-c", pythonInfo)
	cmd.Dir, cmd.Env, cmd.SysProcAttr = "/", []string{}, credential()
	raw, err := cmd.Output()
	if err != nil {
		return nil, unavailable(fmt.Sprintf("%s does not start as the sandbox's user: %v", real, err))
	}
	var info struct {
		Path []string `json:"path"`
		VSZ  int64    `json:"vsz"`
	}
	if err := json.Unmarshal(raw, &info); err != nil {
		return nil, unavailable(fmt.Sprintf("%s: %v", real, err))
	}
	elfs := []string{real}
	libs := map[string]bool{}
	for _, d := range info.Path {
		if d, err = filepath.EvalSymlinks(d); err != nil {
			continue
		}
		libs[d] = true
		_ = filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(p, ".so") {
				elfs = append(elfs, p)
			}
			return nil
		})
	}
	mounts, err := sharedMounts(elfs)
	if err != nil {
		return nil, unavailable(err.Error())
	}
	for _, d := range outermost(libs) {
		mounts = append(mounts, "--ro-bind", d, d)
	}
	mounts = append(mounts, "--ro-bind", real, real)
	base := info.VSZ
	if base <= 0 {
		base = pythonBaseGuess
	}
	j := &jail{bwrap: bw, mounts: mounts, argv: []string{real, "-I", "-S", "-B", "-c"}, base: base}
	o, err := j.run(ctx, 10*time.Second, nil, "import json, resource")
	if err != nil {
		return nil, err
	}
	if o.err != nil {
		return nil, unavailable(fmt.Sprintf("bwrap: %v: %s", o.err, strings.TrimSpace(stderrTail(o.stderr, o.err))))
	}
	return j, nil
}

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
	if _, err := lookPython(); err != nil {
		return nil, errs.Message(errs.Unprocessable, "runtime.python_unavailable",
			"Python is not available on this runtime (no Python interpreter installed); use javascript or typescript", nil)
	}
	j, err := pythonEnv(ctx)
	if err != nil {
		return nil, err
	}
	sandbox.Lock()
	nproc := sandbox.cfg.MaxProcs
	sandbox.Unlock()
	cpu := int64(lim.Timeout/time.Second) + 1
	in, err := marshal(map[string]any{
		"code": call.Code, "function": call.Function, "args": orEmpty(call.Args),
		"as": j.base + pythonSlack + lim.MemBytes, "cpu": cpu, "nproc": nproc, "fsize": pythonFileBytes,
	})
	if err != nil {
		return nil, err
	}
	o, err := j.run(ctx, lim.Timeout, in, driver)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if o.timedOut {
		return nil, timeLimit(lim)
	}
	stdout, stderr, runErr := o.stdout, o.stderr, o.err
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
			// bwrap exits 128+n when the code dies of signal n.
			switch ee.ExitCode() {
			case 128 + int(syscall.SIGXCPU), 128 + int(syscall.SIGKILL):
				return nil, timeLimit(lim)
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
