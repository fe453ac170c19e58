package codebox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The escapes evaluator code was seen to make, replayed: each must fail
// inside the sandbox (sandbox.go). Every test here failed when Python ran
// as a plain subprocess of the runtime and JavaScript in its process.

func py(t *testing.T, lim Limits, code string, args ...any) any {
	t.Helper()
	needPython(t)
	if lim.Timeout == 0 {
		lim.Timeout = 5 * time.Second
	}
	v, err := Run(context.Background(), lim, Call{Runtime: Python, Code: code, Function: "evaluate", Args: args})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func randomHex(t *testing.T) string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func TestSandboxHidesTheRuntimesEnvironment(t *testing.T) {
	// The runtime's keys are in its initial environment, which is what
	// /proc/<pid>/environ shows: the test's own stands in for them.
	env, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		t.Fatal(err)
	}
	var secret string
	for _, kv := range strings.Split(string(env), "\x00") {
		if len(kv) > len(secret) {
			secret = kv
		}
	}
	if len(secret) < 8 {
		t.Fatalf("no variable in this process's environment to look for: %q", env)
	}
	got := py(t, Limits{}, `
import os, glob
def evaluate(secret):
    found = []
    if secret in repr(dict(os.environ)):
        found.append("os.environ")
    paths = ["/proc/%d/environ" % os.getppid(), "/proc/1/environ", "/proc/self/environ"] + glob.glob("/proc/*/environ")
    for p in paths:
        try:
            with open(p, "rb") as f:
                if secret.encode() in f.read():
                    found.append(p)
        except OSError:
            pass
    return [found, sorted(os.environ)]
`, secret)
	if want := []any{[]any{}, []any{}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("the code saw the runtime's secret or an environment: %v", got)
	}
}

func TestSandboxHidesHostFiles(t *testing.T) {
	f, err := os.CreateTemp("", "codebox-host-file-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(f.Name()) })
	secret := "file-" + randomHex(t)
	if _, err := f.WriteString(secret); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chmod(f.Name(), 0o644); err != nil { // readable by anyone: only the mount hides it
		t.Fatal(err)
	}
	got := py(t, Limits{}, `
import os
def evaluate(paths):
    out = {}
    for p in paths:
        try:
            with open(p) as f:
                out[p] = f.read(200)
        except OSError as e:
            out[p] = "refused: " + type(e).__name__
    try:
        open("/usr/lib/codebox-write-probe", "w")
        out["write"] = "written"
    except OSError as e:
        out["write"] = "refused: " + type(e).__name__
    return out
`, []any{f.Name(), "/etc/passwd", "/etc/hostname"})
	for p, v := range got.(map[string]any) {
		if !strings.HasPrefix(v.(string), "refused: ") {
			t.Errorf("%s: %q", p, v)
		}
	}
}

func TestSandboxHasNoNetwork(t *testing.T) {
	pg := os.Getenv("TEST_POSTGRES_URL")
	if pg == "" {
		t.Fatal("TEST_POSTGRES_URL is not set: eval \"$(scripts/deps.sh env)\" first")
	}
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	// The PostgreSQL the tests use answers from here (the runtime's view).
	c, err := net.DialTimeout("tcp", u.Host, time.Second)
	if err != nil {
		t.Fatalf("PostgreSQL at %s: %v", u.Host, err)
	}
	c.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"status":"ok"}`)
	}))
	defer srv.Close()

	got := py(t, Limits{}, `
import socket, urllib.request
def evaluate(host, port, health):
    out = {}
    try:
        socket.create_connection((host, int(port)), timeout=2).close()
        out["postgres"] = "connected"
    except OSError as e:
        out["postgres"] = "refused: " + type(e).__name__
    try:
        out["health"] = urllib.request.urlopen(health, timeout=2).read().decode()
    except Exception as e:
        out["health"] = "refused: " + type(e).__name__
    return out
`, u.Hostname(), u.Port(), srv.URL+"/health")
	for k, v := range got.(map[string]any) {
		if !strings.HasPrefix(v.(string), "refused: ") {
			t.Errorf("%s: %q", k, v)
		}
	}
}

// markedProcesses lists the host's processes whose command line holds
// marker, and kills them (leftovers of a run must not outlive the test).
func markedProcesses(t *testing.T, marker string) []string {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var found []string
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/cmdline")
		if err != nil || !strings.Contains(string(b), marker) {
			continue
		}
		found = append(found, d)
		var pid int
		fmt.Sscanf(filepath.Base(d), "%d", &pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return found
}

func TestSandboxLeavesNoProcessBehind(t *testing.T) {
	marker := "codebox-leftover-" + randomHex(t)
	// A setsid double fork, then an exec so the survivor carries the
	// marker; the run answers only once it is running.
	got := py(t, Limits{}, `
import os, sys
def evaluate(marker):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            os.set_inheritable(w, True)
            os.execv(sys.executable, [sys.executable, "-S", "-c",
                "import os, time; os.write(%d, b'x'); time.sleep(30)" % w, marker])
        os._exit(0)
    os.waitpid(pid, 0)
    os.close(w)
    return os.read(r, 1).decode()
`, marker)
	if got != "x" {
		t.Fatalf("got %v; the grandchild did not start", got)
	}
	if left := markedProcesses(t, marker); len(left) > 0 {
		t.Fatalf("processes of the run outlived its answer: %v", left)
	}

	// The same at the time limit: the run is killed with everything it
	// started.
	_, err := Run(context.Background(), Limits{Timeout: time.Second}, Call{Runtime: Python, Function: "evaluate", Args: []any{marker}, Code: `
import os, sys, time
def evaluate(marker):
    if os.fork() == 0:
        os.setsid()
        os.execv(sys.executable, [sys.executable, "-S", "-c", "import time; time.sleep(30)", marker])
    time.sleep(30)
`})
	wantCode(t, err, "runtime.code_time_limit")
	if left := markedProcesses(t, marker); len(left) > 0 {
		t.Fatalf("processes of the run outlived its time limit: %v", left)
	}
}

func TestSandboxLimitsProcesses(t *testing.T) {
	got := py(t, Limits{}, `
import os, time
def evaluate():
    forked, refused = 0, 0
    for i in range(30):
        try:
            pid = os.fork()
        except OSError:
            refused += 1
            continue
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        forked += 1
    return {"forked": forked, "refused": refused}
`).(map[string]any)
	sandbox.Lock()
	maxProcs := sandbox.cfg.MaxProcs
	sandbox.Unlock()
	if forked := got["forked"].(float64); forked >= float64(maxProcs) || got["refused"].(float64) == 0 {
		t.Fatalf("%v; want at most %d processes in a run", got, maxProcs)
	}
}

func TestSandboxLimitsCannotBeLifted(t *testing.T) {
	// As root, the code could raise its own limits back; in the sandbox
	// it is an unprivileged user in its own user namespace.
	_, err := Run(context.Background(), Limits{Timeout: 10 * time.Second, MemBytes: 32 << 20}, Call{Runtime: Python, Function: "evaluate", Code: `
import resource
def evaluate():
    for r in (resource.RLIMIT_AS, resource.RLIMIT_NPROC, resource.RLIMIT_CPU):
        try:
            resource.setrlimit(r, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        except (ValueError, OSError):
            pass
    a = []
    for i in range(200):
        a.append(bytearray(1 << 20))
    return len(a)
`})
	wantCode(t, err, "runtime.code_memory_limit", "32 MiB")
}

// JavaScript that does not stop leaves nothing running in the runtime:
// before it ran in its own process, a native call that ignores goja's
// interrupt (a backtracking regular expression, bounded only by regexp2's
// own one-second time-out) kept running in the runtime after the run had
// answered with its time limit.
func TestSandboxJavaScriptLeavesNothingRunning(t *testing.T) {
	_, err := Run(context.Background(), Limits{Timeout: 300 * time.Millisecond}, Call{Function: "evaluate",
		Code: "function evaluate() { return /^(a+)+(?=c)$/.test('a'.repeat(40) + 'b') }"})
	wantCode(t, err, "runtime.code_time_limit")
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	if strings.Contains(stacks, "regexp2") || strings.Contains(stacks, "dop251/goja.") {
		t.Fatalf("the run's code still runs in this process after its answer:\n%s", stacks)
	}
}

func TestSandboxUnavailableRefusesCode(t *testing.T) {
	Configure(SandboxConfig{Bwrap: "/nonexistent/bwrap"})
	t.Cleanup(func() { Configure(DefaultSandbox()) })
	for _, rt := range []string{Python, JavaScript, TypeScript} {
		_, err := Run(context.Background(), Limits{}, Call{Runtime: rt, Code: "def evaluate(): return 1", Function: "evaluate"})
		if rt != Python {
			_, err = Run(context.Background(), Limits{}, Call{Runtime: rt, Code: "function evaluate() { return 1 }", Function: "evaluate"})
		}
		wantCode(t, err, "runtime.sandbox_unavailable", "bubblewrap", "/nonexistent/bwrap")
	}
	st := Status(context.Background())
	if st[Python] == nil || st[JavaScript] == nil {
		t.Fatalf("status %v; want both refused", st)
	}
}

// Two runtimes on one host (or two test binaries of go test ./...) start
// from the same uid range; a run that ends kills every process of its uid,
// so it must never take a uid another runtime's run is using.
func TestSandboxUIDsAreClaimedHostWide(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the uid pool is used only when the runtime runs as root")
	}
	// A range of two that no other test uses; the probe and the run below
	// are its first runs.
	const base = 1_900_000
	Configure(SandboxConfig{UIDBase: base, UIDs: 2})
	t.Cleanup(func() { Configure(DefaultSandbox()) })
	// Another runtime's run as the range's first uid: its claim held, its
	// process running as that uid.
	claim, err := claimUID(base)
	if err != nil {
		t.Fatalf("claim uid %d: %v", base, err)
	}
	defer claim.Close()
	other := exec.Command("sleep", "30")
	other.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(base), Gid: uint32(base), Groups: []uint32{}}}
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- other.Wait() }()
	defer func() { _ = other.Process.Kill(); <-ended }()

	if got := py(t, Limits{}, "def evaluate():\n    return 1\n"); got != 1.0 {
		t.Fatalf("run answered %v", got)
	}
	select {
	case err := <-ended:
		ended <- err
		t.Fatalf("the other runtime's process of uid %d was killed by this run: %v", base, err)
	case <-time.After(100 * time.Millisecond): // a kill is sent before the run answers
	}
}
