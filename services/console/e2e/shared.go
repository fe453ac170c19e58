package e2e

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/assayhq/assay/pkg/testutil/platformtest"
)

// One platform for the package: starting the platform (five services, a
// database, a ClickHouse database, NATS, the console) is most of what a
// short browser test costs, so the tests that need nothing of their own
// share one, started by the first of them (Shared) and stopped when the
// package's tests are over (Main, from TestMain). Each test still
// provisions its own user (with their own organization, workspace and
// project), so what one test does is not seen by another. A test that
// changes the platform's own state (the model server's scripted replies or
// model list, its request log, a service's settings) starts its own with
// Start.

// sharedOptions make live evaluations score a window every 2 s (not every
// minute), a second after it ends, so a test of an online evaluation
// (TestEvaluationRun) sees it score within seconds; no other test runs one.
var sharedOptions = Options{platformtest.Options{
	Registry: []string{"REGISTRY_EVAL_LIVE_INTERVAL=2s"},
	Runtime:  []string{"RUNTIME_EVAL_WINDOW_GRACE=1s"},
}}

// shared is the package's platform.
var shared struct {
	once sync.Once
	tb   *packageTB // set by Main; nil: Shared starts a platform per test
	env  *Env
	err  string
}

// Main runs the package's tests (m.Run) and then stops the shared
// platform, if a test started it; it returns the exit code:
//
//	func TestMain(m *testing.M) { os.Exit(e2e.Main(m)) }
func Main(m *testing.M) int {
	shared.tb = &packageTB{}
	code := m.Run()
	shared.tb.end(code != 0)
	return code
}

// Shared returns the package's platform, starting it on first use; without
// Main (no TestMain), it is Start(t). Use a user of the test's own (User):
// the platform has the other tests' users too.
func Shared(t testing.TB) *Env {
	t.Helper()
	if shared.tb == nil {
		return Start(t)
	}
	Built(t)
	if _, err := Chromium(); err != nil {
		t.Fatal(err)
	}
	shared.once.Do(func() {
		defer func() {
			if r := recover(); r != nil {
				f, ok := r.(packageFatal)
				if !ok {
					panic(r)
				}
				shared.err = string(f)
			}
		}()
		shared.env = Start(shared.tb, sharedOptions)
	})
	if shared.err != "" {
		t.Fatalf("the package's shared platform did not start: %s", shared.err)
	}
	return shared.env
}

// packageFatal is the panic of a packageTB's Fatal, recovered by Shared.
type packageFatal string

// packageTB is the testing.TB the shared platform lives on: its cleanups run
// after the package's tests (end), its log goes to the test binary's
// stderr, and a Fatal while starting fails the test that asked (Shared).
// The embedded TB is nil: a method the platform's helpers do not call
// panics, which the methods below keep from happening.
type packageTB struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
	failed   bool
}

func (p *packageTB) Helper()      {}
func (p *packageTB) Name() string { return "e2e-shared-platform" }

func (p *packageTB) Cleanup(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cleanups = append(p.cleanups, f)
}

func (p *packageTB) Log(args ...any) { p.Logf("%s", strings.TrimSuffix(fmt.Sprintln(args...), "\n")) }
func (p *packageTB) Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "shared platform: "+format+"\n", args...)
}

func (p *packageTB) Fail() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failed = true
}

// Failed reports a failure of the platform itself, or, once the tests are
// over, of any test of the package: the services then print their logs
// as they stop (svctest does on a failed test).
func (p *packageTB) Failed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}

func (p *packageTB) Error(args ...any)                 { p.Log(args...); p.Fail() }
func (p *packageTB) Errorf(format string, args ...any) { p.Logf(format, args...); p.Fail() }
func (p *packageTB) FailNow()                          { p.Fail(); panic(packageFatal("failed")) }
func (p *packageTB) Fatal(args ...any) {
	p.Error(args...)
	panic(packageFatal(strings.TrimSuffix(fmt.Sprintln(args...), "\n")))
}
func (p *packageTB) Fatalf(format string, args ...any) {
	p.Errorf(format, args...)
	panic(packageFatal(fmt.Sprintf(format, args...)))
}
func (p *packageTB) Skip(args ...any)                 { p.Fatal(args...) }
func (p *packageTB) Skipf(format string, args ...any) { p.Fatalf(format, args...) }
func (p *packageTB) SkipNow()                         { p.FailNow() }
func (p *packageTB) Skipped() bool                    { return false }

// TempDir is a directory removed at the end.
func (p *packageTB) TempDir() string {
	dir, err := os.MkdirTemp("", "assay-e2e-shared-")
	if err != nil {
		p.Fatal(err)
	}
	p.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// end runs the cleanups, last registered first (as testing does).
func (p *packageTB) end(failed bool) {
	p.mu.Lock()
	p.failed = p.failed || failed
	fs := p.cleanups
	p.cleanups = nil
	p.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
