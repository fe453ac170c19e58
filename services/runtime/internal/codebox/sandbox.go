package codebox

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/assayhq/assay/pkg/errs"
)

// The sandbox every run goes through, Python and JavaScript alike. A run
// is one bubblewrap (bwrap) process that starts the interpreter in fresh
// user, PID, network, mount, IPC, UTS and cgroup namespaces:
//
//   - as an unprivileged uid: when the runtime runs as root, bwrap itself
//     is started as a uid taken from SandboxConfig's range (one per
//     concurrent run, so RLIMIT_NPROC and the kill of leftovers are per
//     run); otherwise as the runtime's own uid, inside a user namespace;
//     further user namespaces are refused (--disable-userns);
//   - with an empty environment (bwrap itself is started with none, so not
//     even its own memory holds the runtime's variables);
//   - seeing only a read-only view of the interpreter, its standard library
//     and the shared libraries they load, a small private tmpfs as /tmp
//     and working directory, and a minimal /dev; no /proc at all (so
//     nothing of another process can be read, and the sandbox works in
//     containers whose /proc is partly masked; only a race-instrumented
//     test binary gets its PID namespace's own, see jsbox.go) and no
//     network but its own loopback;
//   - with kernel limits the interpreter sets on itself before it reads the
//     user's code: address space or data size (memory), CPU seconds,
//     processes (RLIMIT_NPROC, counted in the run's own user namespace),
//     file size and open files; the output is capped by the reader;
//   - killed whole at the deadline: bwrap runs with --die-with-parent and
//     is the parent of the PID namespace's init, so when it is killed, or
//     when the code's main process exits, the kernel kills every process
//     left in the namespace; a run as a pooled uid also has any process of
//     that uid killed before the uid is handed out again.
//
// Whether the sandbox can be set up is probed once per runtime (Python,
// JavaScript); where it cannot, the code is refused with a 422
// runtime.sandbox_unavailable naming the reason, never run unconfined.

// SandboxConfig is how the sandbox is set up (RUNTIME_CODE_* variables,
// documented in the runtime's Config).
type SandboxConfig struct {
	Bwrap    string // bwrap executable, a path or a name on PATH
	Python   string // Python interpreter
	UIDBase  int    // first uid of the range runs use when the runtime is root
	UIDs     int    // size of that range: runs at once, the others wait
	MaxProcs int    // processes (and threads) one run may have
}

// DefaultSandbox is the configuration the runtime's defaults give.
func DefaultSandbox() SandboxConfig {
	return SandboxConfig{Bwrap: "bwrap", Python: "/usr/bin/python3", UIDBase: 1_000_000, UIDs: 256, MaxProcs: 16}
}

var sandbox struct {
	sync.Mutex
	cfg  SandboxConfig
	pool chan int // free uids; nil when the runtime is not root
	py   *probed
	js   *probed
}

func init() { Configure(DefaultSandbox()) }

// Configure sets the sandbox up anew; the next run of each runtime probes
// again. Called by the runtime's main before it serves.
func Configure(c SandboxConfig) {
	d := DefaultSandbox()
	if c.Bwrap == "" {
		c.Bwrap = d.Bwrap
	}
	if c.Python == "" {
		c.Python = d.Python
	}
	if c.UIDBase <= 0 {
		c.UIDBase = d.UIDBase
	}
	if c.UIDs <= 0 {
		c.UIDs = d.UIDs
	}
	if c.MaxProcs <= 0 {
		c.MaxProcs = d.MaxProcs
	}
	sandbox.Lock()
	defer sandbox.Unlock()
	sandbox.cfg = c
	sandbox.pool = nil
	if os.Geteuid() == 0 {
		sandbox.pool = make(chan int, c.UIDs)
		for i := range c.UIDs {
			sandbox.pool <- c.UIDBase + i
		}
	}
	sandbox.py = &probed{probe: probePython}
	sandbox.js = &probed{probe: probeJS}
}

// Status probes both runtimes and returns, for each, nil or why its code
// is refused; the runtime logs it at start.
func Status(ctx context.Context) map[string]error {
	_, pyErr := pythonEnv(ctx)
	_, jsErr := jsEnv(ctx)
	return map[string]error{Python: pyErr, JavaScript: jsErr}
}

// probed is one runtime's probe, run once (a failure caused by the
// caller's cancellation is retried).
type probed struct {
	mu    sync.Mutex
	done  bool
	env   *jail
	err   error
	probe func(ctx context.Context, cfg SandboxConfig) (*jail, error)
}

func (p *probed) get(ctx context.Context) (*jail, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return p.env, p.err
	}
	sandbox.Lock()
	cfg := sandbox.cfg
	sandbox.Unlock()
	env, err := p.probe(ctx, cfg)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	p.done, p.env, p.err = true, env, err
	return env, err
}

func unavailable(reason string) error {
	return errs.Message(errs.Unprocessable, "runtime.sandbox_unavailable",
		"custom code cannot run on this runtime: its sandbox cannot be set up ("+bound(reason, 300)+"); the operator must install bubblewrap and allow unprivileged user namespaces",
		map[string]any{"reason": bound(reason, 300)})
}

// jail is what one runtime's runs share: the bwrap binary, the mounts and
// the command.
type jail struct {
	bwrap  string
	mounts []string // bwrap arguments
	argv   []string // the command inside
	copy   string   // when set, copied into the sandbox as argv[0] (--file): the sandbox's user cannot read it where it is
	base   int64    // the interpreter's own address space (Python)
}

// outcome is what a sandboxed process left.
type outcome struct {
	stdout, stderr *cappedBuffer
	err            error // from Wait
	timedOut       bool  // killed at the deadline
}

// run starts the jail's command with stdin, waits at most deadline, and
// kills what is left of it.
func (j *jail) run(ctx context.Context, deadline time.Duration, stdin []byte, extra ...string) (*outcome, error) {
	uid, release, err := takeUID(ctx)
	if err != nil {
		return nil, err
	}
	defer release()

	args := []string{
		"--unshare-all", "--unshare-user", "--disable-userns",
		"--die-with-parent", "--new-session", "--clearenv",
		"--hostname", "codebox",
		"--dev", "/dev",
		"--size", strconv.Itoa(tmpfsBytes), "--tmpfs", "/tmp",
	}
	args = append(args, j.mounts...)
	var files []*os.File
	if j.copy != "" {
		// Opened per run: concurrent runs must not share a file offset.
		f, err := os.Open(j.copy)
		if err != nil {
			return nil, fmt.Errorf("codebox: %w", err)
		}
		defer f.Close()
		// fd 3 in bwrap: the first ExtraFiles entry
		args = append(args, "--perms", "0555", "--file", "3", j.argv[0])
		files = append(files, f)
	}
	args = append(args, "--remount-ro", "/", "--chdir", "/tmp", "--")
	args = append(args, j.argv...)
	args = append(args, extra...)

	runCtx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	cmd := exec.CommandContext(runCtx, j.bwrap, args...)
	cmd.Dir = "/"
	cmd.Env = []string{}
	cmd.Stdin = bytes.NewReader(stdin)
	o := &outcome{stdout: &cappedBuffer{max: MaxResultBytes + 64<<10}, stderr: &cappedBuffer{max: 4 << 10}}
	cmd.Stdout, cmd.Stderr = o.stdout, o.stderr
	cmd.ExtraFiles = files
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if uid >= 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}
	}
	cmd.Cancel = func() error {
		// bwrap's group; --die-with-parent and the PID namespace take the
		// rest with it.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = time.Second
	o.err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if uid >= 0 {
		killUID(uid)
	}
	o.timedOut = runCtx.Err() != nil && ctx.Err() == nil
	return o, nil
}

// tmpfsBytes is the size of a run's /tmp: the interpreters need none, and
// code that writes there must not grow the host's memory.
const tmpfsBytes = 4 << 20

// takeUID hands out a uid of the pool (-1 when the runtime is not root and
// runs keep its uid), waiting while all are in use. A uid is also claimed
// host-wide (claimUID): every runtime on a host starts from the same range,
// and killUID after a run would otherwise kill another runtime's run of the
// same uid (two runtimes, or the test binaries go test runs side by side).
func takeUID(ctx context.Context) (int, func(), error) {
	sandbox.Lock()
	pool := sandbox.pool
	sandbox.Unlock()
	if pool == nil {
		return -1, func() {}, nil
	}
	for busy := 0; ; {
		select {
		case uid := <-pool:
			claim, err := claimUID(uid)
			if err == nil {
				return uid, func() { claim.Close(); pool <- uid }, nil
			}
			pool <- uid // another process holds it; try the next
			if busy++; busy < cap(pool) {
				continue
			}
		case <-ctx.Done():
			return 0, nil, ctx.Err()
		}
		busy = 0
		select { // every free uid is held elsewhere on the host
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return 0, nil, ctx.Err()
		}
	}
}

// claimDir holds one lock file per pooled uid, taken with flock by the
// process that runs as that uid; the kernel drops the lock when the file is
// closed or the process dies.
var claimDir = filepath.Join(os.TempDir(), "assay-sandbox-uids")

// claimUID takes uid's host-wide lock without waiting; closing the file
// gives it back.
func claimUID(uid int) (*os.File, error) {
	if err := os.MkdirAll(claimDir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(claimDir, strconv.Itoa(uid)), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// killUID kills every process of uid: a run's leftovers, should any have
// left its PID namespace's reach. Only processes of the pool's uids are
// ever signalled.
func killUID(uid int) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if fi, err := os.Stat("/proc/" + e.Name()); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

// credential is how the probes run a host command as a run would (the
// pool's first uid when root), so a file the sandbox user cannot read
// fails the probe, not every run.
func credential() *syscall.SysProcAttr {
	sandbox.Lock()
	defer sandbox.Unlock()
	if sandbox.pool == nil {
		return nil
	}
	uid := uint32(sandbox.cfg.UIDBase)
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{}}}
}

func findBwrap(cfg SandboxConfig) (string, error) {
	p, err := exec.LookPath(cfg.Bwrap)
	if err != nil {
		return "", fmt.Errorf("bubblewrap (%s) is not installed: %v", cfg.Bwrap, err)
	}
	return p, nil
}

// sharedMounts are the read-only binds of the directories that hold the
// shared libraries the given ELF files load (and, for the host's usr-merged
// top level, its /lib, /lib64 and /bin symlinks).
func sharedMounts(files []string) ([]string, error) {
	dirs, err := libDirs(files)
	if err != nil {
		return nil, err
	}
	var args []string
	for _, top := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		if t, err := os.Readlink(top); err == nil {
			args = append(args, "--symlink", t, top)
		}
	}
	for _, d := range dirs {
		args = append(args, "--ro-bind", d, d)
	}
	return args, nil
}

// libDirs resolves the ELF interpreter and the DT_NEEDED libraries of
// files, transitively, as the dynamic loader's default search would (no
// ld.so.cache in the sandbox), and returns the real directories that hold
// them, without ones nested in another.
func libDirs(files []string) ([]string, error) {
	search := []string{"/lib", "/usr/lib", "/lib64", "/usr/lib64"}
	for _, d := range []string{"/lib", "/usr/lib"} {
		m, _ := filepath.Glob(d + "/*-linux-gnu*")
		search = append(m, search...)
	}
	seen := map[string]bool{}
	dirs := map[string]bool{}
	add := func(p string) (string, bool) {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return "", false
		}
		dirs[filepath.Dir(real)] = true
		// and the folder of the name itself, when it is a symlink
		// elsewhere (/lib64/ld-linux-x86-64.so.2)
		if d, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			dirs[d] = true
		}
		return real, true
	}
	var walk func(string, bool) error
	walk = func(path string, top bool) error {
		if seen[path] {
			return nil
		}
		seen[path] = true
		f, err := elf.Open(path)
		if err != nil {
			if top {
				return err
			}
			return nil
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				b, err := io.ReadAll(p.Open())
				if err == nil {
					if real, ok := add(strings.TrimRight(string(b), "\x00")); ok {
						seen[real] = true
					}
				}
			}
		}
		libs, _ := f.ImportedLibraries()
		for _, lib := range libs {
			for _, d := range search {
				if real, ok := add(filepath.Join(d, lib)); ok {
					if err := walk(real, false); err != nil {
						return err
					}
					break
				}
			}
		}
		return nil
	}
	for _, f := range files {
		if err := walk(f, true); err != nil {
			return nil, err
		}
	}
	return outermost(dirs), nil
}

// outermost lists the set's directories without those inside another.
func outermost(set map[string]bool) []string {
	var all []string
	for d := range set {
		all = append(all, d)
	}
	sort.Strings(all)
	var out []string
	for _, d := range all {
		if n := len(out); n > 0 && (d == out[n-1] || strings.HasPrefix(d, out[n-1]+"/")) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// errReply is how the sandboxed side reports an error it decided on.
type errReply struct {
	Kind   errs.Kind `json:"kind"`
	Code   string    `json:"code"`
	Msg    string    `json:"msg"`
	Detail any       `json:"detail,omitempty"`
}

func (e *errReply) err() error {
	if e.Code == "" || e.Kind == 0 {
		return codeError("runtime.code_error", e.Msg)
	}
	return &errs.Error{Kind: e.Kind, Code: e.Code, Msg: bound(e.Msg, maxMessageRunes+1), Detail: e.Detail}
}

func marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, errs.Message(errs.Unprocessable, "runtime.code_args", "arguments are not JSON: "+err.Error(), nil)
	}
	return b, nil
}
