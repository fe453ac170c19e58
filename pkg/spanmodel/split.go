package spanmodel

import (
	"runtime"
	"sync"
)

// Split runs fn over [0, n) cut into contiguous ranges of at least minPer
// elements, at most one per processor (GOMAXPROCS), side by side, and
// returns once every range is done. part numbers the ranges; part 0 runs
// on the caller's goroutine. Under minPer*2 elements fn runs once, on the
// caller's goroutine.
//
// Why: one request's spans are normalised and encoded one after another,
// so a 512-span request kept one core busy for its whole latency while the
// other waited (an SDK exporter sends one request at a time).
func Split(n, minPer int, fn func(part, from, to int)) {
	parts := min(runtime.GOMAXPROCS(0), n/max(minPer, 1))
	if parts <= 1 {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for p := parts - 1; p >= 0; p-- {
		from, to := p*n/parts, (p+1)*n/parts
		if p == 0 {
			fn(0, from, to)
			break
		}
		wg.Go(func() { fn(p, from, to) })
	}
	wg.Wait()
}
