// Package svctest builds a service binary of this repository once per test
// process and runs it as a subprocess, so tests exercise the real binary
// (configuration, migrations, middleware) over real HTTP, and can kill -9 it.
package svctest

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/assayhq/assay/pkg/testutil/freeport"
)

var (
	buildMu sync.Mutex
	built   = map[string]string{} // package path → binary
)

// Binary builds ./<pkg> (for example "services/writer/cmd/writer") once per
// test process and returns the binary's path.
func Binary(t testing.TB, pkg string) string {
	t.Helper()
	return build(t, "./"+pkg)
}

// build runs go build for target once per test process, into a directory
// of this process (assay-svctest-<pid>-* in the temp folder). Nothing runs
// at a test process's end to remove it, so each build first removes the
// directories of processes that are gone: without that, every test process
// left its binaries behind and a few runs of make test filled a CI
// machine's disk.
func build(t testing.TB, target string) string {
	buildMu.Lock()
	defer buildMu.Unlock()
	if b, ok := built[target]; ok {
		return b
	}
	if binDir == "" {
		removeStaleBinDirs()
		dir, err := os.MkdirTemp("", fmt.Sprintf("assay-svctest-%d-", os.Getpid()))
		if err != nil {
			t.Fatalf("svctest: %v", err)
		}
		binDir = dir
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	// Named after the whole package path. Named nats-server, the cluster
	// test's restarted node never let the writer store every span (four
	// runs of four); why is not understood yet.
	name := strings.NewReplacer("/", "_", ".", "_").Replace(strings.TrimPrefix(target, "./"))
	bin := filepath.Join(binDir, name)
	cmd := exec.Command("go", "build", "-o", bin, target)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("svctest: go build %s: %v\n%s", target, err, out)
	}
	built[target] = bin
	return bin
}

// binDir holds this test process's binaries.
var binDir string

// removeStaleBinDirs removes the binary directories of test processes that
// no longer run (a reused pid keeps one a little longer; no harm).
func removeStaleBinDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "assay-svctest-*"))
	for _, d := range dirs {
		var pid int
		if _, err := fmt.Sscanf(filepath.Base(d), "assay-svctest-%d-", &pid); err != nil || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			_ = os.RemoveAll(d)
		}
	}
}

// Options describe one service process.
type Options struct {
	// Pkg is the main package, relative to the repository root.
	Pkg string
	// AddrVar is the variable that sets the listen address (WRITER_ADDR);
	// Start picks a free port for it.
	AddrVar string
	// Env are more "K=V" variables; PATH is always passed on.
	Env []string
	// NoWait skips waiting for /ready (a test that starts the service while
	// a dependency is down on purpose).
	NoWait bool
	// ReadyTimeout bounds the wait for /ready (default 60 s).
	ReadyTimeout time.Duration
	// Addr is the listen address (host:port); empty, Start picks a free
	// port. A service another one must know before it starts (two that
	// call each other) is given one from freeport.Addr.
	Addr string
}

// Service is a running service process.
type Service struct {
	t    testing.TB
	opts Options
	env  []string
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited (Wait returned)
	log  *syncBuffer
	// Addr is host:port of the service's HTTP listener; URL is http://Addr.
	Addr string
	URL  string
	// MetricsURL is http://host:port of the service's metrics listener
	// (<SERVICE>_METRICS_ADDR, a free port of its own: the default port
	// would be shared by every service of its kind a test process starts);
	// GET MetricsURL+"/metrics" scrapes it.
	MetricsURL string
}

// Start runs the service and waits until its /ready answers 200 (unless
// NoWait). It is stopped when the test ends.
func Start(t testing.TB, o Options) *Service {
	t.Helper()
	addr := o.Addr
	if addr == "" {
		addr = freeport.Addr(t)
	}
	// No shutdown delay (app.Lifecycle): a test's teardown has no load
	// balancer to wait for. o.Env may set one; the later value wins.
	prefix := strings.TrimSuffix(o.AddrVar, "_ADDR")
	delay := prefix + "_SHUTDOWN_DELAY=0s"
	metrics := freeport.Addr(t)
	s := &Service{t: t, opts: o, Addr: addr, URL: "http://" + addr, MetricsURL: "http://" + metrics,
		env: append([]string{o.AddrVar + "=" + addr, prefix + "_METRICS_ADDR=" + metrics, "PATH=" + os.Getenv("PATH"), delay}, o.Env...)}
	s.Restart()
	t.Cleanup(s.Stop)
	if !o.NoWait {
		s.WaitReady()
	}
	return s
}

// Restart starts the process again (after Kill or Stop); it does not wait.
func (s *Service) Restart() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = &syncBuffer{}
	cmd := exec.Command(Binary(s.t, s.opts.Pkg))
	cmd.Env = s.env
	cmd.Stdout, cmd.Stderr = s.log, s.log
	cmd.SysProcAttr = childAttr()
	closeInheritedOnExec()
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("svctest: start %s: %v", s.opts.Pkg, err)
	}
	s.cmd = cmd
	// One goroutine owns Wait, so readiness polling can see an early exit.
	s.done = make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(s.done)
}

// WaitReady polls /ready until 200; it fails the test if the process exits
// first or the timeout passes, showing the process's log.
func (s *Service) WaitReady() {
	s.t.Helper()
	timeout := s.opts.ReadyTimeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	s.mu.Lock()
	exited := s.done
	s.mu.Unlock()
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: 2 * time.Second}
	for time.Now().Before(deadline) {
		if res, err := client.Get(s.URL + "/ready"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-exited:
			s.t.Fatalf("svctest: %s exited before it was ready:\n%s", s.opts.Pkg, s.Log())
		case <-time.After(50 * time.Millisecond):
		}
	}
	s.t.Fatalf("svctest: %s not ready after %s:\n%s", s.opts.Pkg, timeout, s.Log())
}

// Signal sends sig to the running process without waiting (a drain test's
// SIGTERM; Stop sends one and waits).
func (s *Service) Signal(sig os.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(sig)
	}
}

// Exited is closed when the current process has exited.
func (s *Service) Exited() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// Kill sends SIGKILL: no flush, no ack, no goodbye.
func (s *Service) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(syscall.SIGKILL)
		<-s.done
		s.cmd = nil
	}
}

// Stop sends SIGTERM and waits for the drain; the log is shown on failure.
func (s *Service) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
	if s.t.Failed() {
		s.t.Logf("%s log:\n%s", s.opts.Pkg, s.log.String())
	}
}

// Log returns what the current process wrote.
func (s *Service) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// syncBuffer is written by exec's copying goroutines and read by Log.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// GoBinary builds the main package importPath (a dependency of the
// workspace, e.g. github.com/nats-io/nats-server/v2) once per test process,
// at the version go.mod pins, and returns the binary's path.
func GoBinary(t testing.TB, importPath string) string {
	t.Helper()
	return build(t, importPath)
}

// Prepare makes cmd a child like the services Start runs: killed with the
// test process and holding none of its inherited descriptors.
func Prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = childAttr()
	closeInheritedOnExec()
}
