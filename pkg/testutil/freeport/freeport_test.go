package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestPortIsBelowTheEphemeralRangeAndFree(t *testing.T) {
	high := ephemeralStart()
	if high-low < 1000 {
		t.Skipf("ephemeral range starts at %d: ports come from the kernel", high)
	}
	seen := map[int]bool{}
	for range 50 {
		p := Port(t)
		if p < low || p >= high {
			t.Fatalf("port %d is outside [%d, %d)", p, low, high)
		}
		seen[p] = true
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("port %d is not free: %v", p, err)
		}
		ln.Close()
	}
	if len(seen) < 40 {
		t.Fatalf("50 picks gave only %d ports: picks collide", len(seen))
	}
}

func TestPickSkipsAPortInUse(t *testing.T) {
	high := ephemeralStart()
	if high-low < 1000 {
		t.Skipf("ephemeral range starts at %d: ports come from the kernel", high)
	}
	p := pickFrom(0, high)
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if q := pickFrom(p-low, high); q == p || q == 0 {
		t.Fatalf("port %d is held, yet picked %d", p, q)
	}
}
