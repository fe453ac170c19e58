package fuzzbound

import (
	"fmt"
	"testing"
)

// recorder is a testing.TB whose Fatalf only records, so the test can see
// Check fail.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }
func (r *recorder) Helper()                           {}

var sink []byte

func TestCheckFailsOverTheBudgetOnly(t *testing.T) {
	b := Bound{PerByte: 100, Fixed: 1 << 20}
	r := &recorder{TB: t}
	b.Check(r, 1000, func() { sink = make([]byte, 64<<10) })
	if r.failed != "" {
		t.Fatalf("64 KiB for a 1000-byte input is within 100×1000+1 MiB: %s", r.failed)
	}
	b.Check(r, 1000, func() { sink = make([]byte, 8<<20) })
	if r.failed == "" {
		t.Fatal("8 MiB for a 1000-byte input passed a budget of 100×1000+1 MiB")
	}
}

func TestAllocCountsOtherGoroutines(t *testing.T) {
	got := Alloc(func() {
		done := make(chan struct{})
		go func() { sink = make([]byte, 4<<20); close(done) }()
		<-done
	})
	if got < 4<<20 {
		t.Fatalf("a 4 MiB allocation on another goroutine counted %d bytes", got)
	}
}
