//go:build race

package codebox

// raceEnabled: the race detector's runtime maps shadow memory of several
// times the heap as private writable memory, which RLIMIT_DATA counts, so a
// race-instrumented JavaScript child (the test binary under go test -race)
// keeps only the heap watch as its memory limit.
const raceEnabled = true
