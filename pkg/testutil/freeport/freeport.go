// Package freeport picks loopback ports for the servers a test runs as
// child processes and may stop and start again on the same port.
//
// A port the kernel hands out for "127.0.0.1:0" lies in its ephemeral
// range (net.ipv4.ip_local_port_range), the range outgoing connections
// take their local ports from. Once a child listening on such a port
// stops, any connection, even the tested service's own redial of that
// very address (a TCP self-connect), may be given it, and the child,
// started again, fails with "address already in use": a clean-clone run
// of TestNoLossWhenClickHouseStops did. Ports below that range are never
// handed out without being asked for, so they stay free while a child is
// down.
package freeport

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// low is where the picked ports start: above the well-known and the
// usual fixed ports of development servers.
const low = 10000

// ephemeralStart is the first port of the kernel's ephemeral range, or
// 32768 (Linux's default) where it cannot be read.
func ephemeralStart() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return n
}

// Port returns a loopback port below the ephemeral range that was free a
// moment ago. Where that range leaves fewer than 1,000 ports below it,
// the kernel picks one, as for "127.0.0.1:0".
func Port(t testing.TB) int {
	t.Helper()
	if high := ephemeralStart(); high-low >= 1000 {
		if p := pickFrom(rand.IntN(high-low), high); p != 0 {
			return p
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// pickFrom tries up to 500 ports of [low, high), from low+start on with a
// prime stride (spread out, no repeats), and returns the first one it can
// listen on, or 0.
func pickFrom(start, high int) int {
	for i := range 500 {
		p := low + (start+i*7919)%(high-low)
		if ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p)); err == nil {
			ln.Close()
			return p
		}
	}
	return 0
}

// Addr is Port as a host:port address.
func Addr(t testing.TB) string {
	t.Helper()
	return "127.0.0.1:" + strconv.Itoa(Port(t))
}
