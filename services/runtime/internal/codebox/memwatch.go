package codebox

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// goja has no heap limit, so a JavaScript run's memory is watched from
// outside: every watchEvery the watcher reads the process's heap (a few
// microseconds, no stop-the-world). When the heap objects have grown by
// more than the limit since the run began, it forces a collection (shared
// between concurrent watchers) and interrupts the run if the live heap
// after it has still grown by more than the limit.
//
// What this guarantees: a run is never stopped before the live heap has
// grown by MemBytes since it started, and is stopped, at its next
// instruction, before it has grown by 1.75 MemBytes plus what it
// allocates in one watch interval (the baseline's slack of half a limit,
// and the re-arm margin of a quarter limit, both below). The single builtin calls that could
// allocate more than the limit before the next instruction are refused up
// front by the guards in js.go. What it does not guarantee: the heap is the
// process's, so a run sharing the process with other allocations (another
// run, a large request) can be stopped by their growth; it errs towards
// stopping, never towards letting the process grow unwatched.
const watchEvery = time.Millisecond

var heapSamples = []metrics.Sample{
	{Name: "/memory/classes/heap/objects:bytes"}, // live and not yet swept
	{Name: "/gc/heap/live:bytes"},                // marked live by the last GC
}

// readHeap returns the heap objects bytes and the live bytes of the last GC.
func readHeap() (objects, live uint64) {
	s := make([]metrics.Sample, len(heapSamples))
	copy(s, heapSamples)
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

// gcShared lets concurrent watchers share one forced collection: a watcher
// asking for a GC that completed after its own request began reuses its
// figure instead of forcing another.
var gcShared struct {
	sync.Mutex
	at   time.Time
	live uint64
}

func liveAfterGC(asked time.Time) uint64 {
	gcShared.Lock()
	defer gcShared.Unlock()
	if gcShared.at.After(asked) {
		return gcShared.live
	}
	runtime.GC()
	_, live := readHeap()
	gcShared.at, gcShared.live = time.Now(), live
	return live
}

// watchHeap calls over once the run's live heap growth exceeds limit, and
// returns a stop function. over is called at most once.
func watchHeap(limit int64, over func()) (stop func()) {
	// base must not be below the live heap now (or the run would be
	// charged for what was live before it) and should not be far above it
	// (or it would get the garbage as extra room): the heap objects are an
	// upper bound, tight unless much is unswept since the last GC, in which
	// case a GC gives the live figure.
	base, lastLive := readHeap()
	if base > lastLive+uint64(limit)/2 {
		base = liveAfterGC(time.Now())
	}
	trigger := base + uint64(limit)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			objects, _ := readHeap()
			if objects <= trigger {
				continue
			}
			live := liveAfterGC(time.Now())
			if live > base+uint64(limit) {
				over()
				return
			}
			// Garbage, not growth: re-arm a quarter limit above what is
			// live, so a run churning garbage forces at most one GC per
			// quarter limit allocated.
			trigger = max(base+uint64(limit), live+uint64(limit)/4)
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}
