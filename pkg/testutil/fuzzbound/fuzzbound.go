// Package fuzzbound checks that one fuzz input costs memory linear in its
// size. A fuzz target wraps the work for one input in Bound.Check: the bytes
// the whole process allocates meanwhile (an HTTP handler's goroutine counts
// too) must stay within PerByte×len(input)+Fixed, and the live heap must
// stay under a hard cap. Over the cap the process panics at once, so the
// fuzzer records the input as a crasher instead of the kernel killing a
// process that grows quadratically (one such parser took 22 GB for a 794 KB
// body).
//
// Allocation volume, not wall time, is the measure: it is deterministic
// enough to assert on and grows with the square of the input exactly when
// the work does.
package fuzzbound

import (
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Bound is the allocation budget of one input.
type Bound struct {
	PerByte uint64 // bytes that may be allocated per byte of input
	Fixed   uint64 // bytes any input may allocate, however small
}

// Limit is the budget for an input of size bytes.
func (b Bound) Limit(size int) uint64 { return b.PerByte*uint64(size) + b.Fixed }

// Check runs fn and fails t when the process allocated more than the
// budget for an input of size bytes while fn ran.
func (b Bound) Check(t testing.TB, size int, fn func()) {
	t.Helper()
	got := Alloc(fn)
	if lim := b.Limit(size); got > lim {
		t.Fatalf("fuzzbound: one input of %d bytes allocated %d bytes, over the linear budget %d×size+%d = %d: the work is not linear in the input",
			size, got, b.PerByte, b.Fixed, lim)
	}
}

// Alloc runs fn and returns the bytes the process allocated meanwhile;
// while fn runs, a live heap over the cap (FUZZ_MAX_HEAP_MB, default 2048)
// panics.
func Alloc(fn func()) uint64 {
	watchOnce.Do(startWatchdog)
	// runtime/metrics rather than runtime.ReadMemStats: no stop-the-world,
	// so a fast target keeps most of its execs/s. Small allocations are
	// counted a span at a time, so the figure may lag by up to a few
	// hundred KiB; the budgets' fixed parts absorb that.
	sample := []metrics.Sample{{Name: allocsMetric}}
	metrics.Read(sample)
	before := sample[0].Value.Uint64()
	active.Add(1)
	defer active.Add(-1)
	fn()
	metrics.Read(sample)
	return sample[0].Value.Uint64() - before
}

const allocsMetric = "/gc/heap/allocs:bytes"

var (
	watchOnce sync.Once
	active    atomic.Int32 // inputs being measured: the watchdog bites only then
)

// startWatchdog polls the live heap: cheap (runtime/metrics does not stop
// the world), and only while an input is measured, so the package's other
// tests are never cut short by it.
func startWatchdog() {
	capMB := uint64(2048)
	if v, err := strconv.ParseUint(os.Getenv("FUZZ_MAX_HEAP_MB"), 10, 64); err == nil && v > 0 {
		capMB = v
	}
	limit := capMB << 20
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		for range time.Tick(5 * time.Millisecond) {
			if active.Load() == 0 {
				continue
			}
			metrics.Read(sample)
			if live := sample[0].Value.Uint64(); live > limit {
				panic(fmt.Sprintf("fuzzbound: live heap %d MiB over the %d MiB cap (FUZZ_MAX_HEAP_MB) while one fuzz input ran", live>>20, capMB))
			}
		}
	}()
}
