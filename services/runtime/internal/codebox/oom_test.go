package codebox

import (
	"strings"
	"testing"
)

// TestOutOfMemoryIsReadFromTheHead: a JavaScript child that runs out of
// memory dies with the Go runtime's "fatal error: runtime: out of memory"
// followed by every goroutine's stack; the stacks pushed the line out of
// the last 500 bytes, and the limit read as a crash
// (TestJavaScriptMemoryLimit/doubling failed so under load).
func TestOutOfMemoryIsReadFromTheHead(t *testing.T) {
	b := &cappedBuffer{max: 64 << 10}
	_, _ = b.Write([]byte("fatal error: runtime: out of memory\n\nruntime stack:\n"))
	_, _ = b.Write([]byte(strings.Repeat("github.com/dop251/goja.(*baseJsFuncObject)._call(...)\n", 200)))
	if !outOfMemory(b) {
		t.Fatal("an out-of-memory crash with long stacks was not recognised")
	}
	if strings.Contains(stderrTail(b, nil), "out of memory") {
		t.Fatal("the test's stacks are too short to push the line out of the tail")
	}
	clean := &cappedBuffer{max: 64 << 10}
	_, _ = clean.Write([]byte("panic: something else\n"))
	if outOfMemory(clean) {
		t.Fatal("a crash that is not for memory read as out of memory")
	}
}
