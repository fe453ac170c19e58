// Package progress draws progress on a terminal (a bar redrawn in place)
// and prints plain lines elsewhere (a CI log would fill with carriage
// returns otherwise), at most one line per interval.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Bar reports progress towards a total.
type Bar struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	label    string
	every    time.Duration
	last     time.Time
	lastLine string
	width    int
}

// New returns a bar writing to w; on a non-terminal it prints a line at
// most every `every`.
func New(w io.Writer, label string, every time.Duration) *Bar {
	return &Bar{w: w, tty: IsTerminal(w), label: label, every: every, width: 30}
}

// Update shows done out of total with a suffix (counts by status, sizes).
func (b *Bar) Update(done, total int64, suffix string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tty {
		fmt.Fprintf(b.w, "\r\x1b[K%s %s %s", b.label, Render(done, total, b.width), suffix)
		return
	}
	line := fmt.Sprintf("%s %s", b.label, suffix)
	if line == b.lastLine || time.Since(b.last) < b.every {
		return
	}
	b.last, b.lastLine = time.Now(), line
	fmt.Fprintln(b.w, line)
}

// Done ends the bar with a final line (printed on a terminal too).
func (b *Bar) Done(suffix string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tty {
		fmt.Fprint(b.w, "\r\x1b[K")
	}
	fmt.Fprintf(b.w, "%s %s\n", b.label, suffix)
}

// Render is the bar itself: [=====>    ] 45%.
func Render(done, total int64, width int) string {
	if total <= 0 {
		return "[" + strings.Repeat(" ", width) + "]   ?%"
	}
	if done > total {
		done = total
	}
	n := int(int64(width) * done / total)
	bar := strings.Repeat("=", n)
	if n < width {
		bar += ">" + strings.Repeat(" ", width-n-1)
	}
	return fmt.Sprintf("[%s] %3d%%", bar, 100*done/total)
}

// Reader counts bytes read through it into a bar.
type Reader struct {
	R     io.Reader
	Bar   *Bar
	Total int64
	n     int64
}

func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.R.Read(p)
	r.n += int64(n)
	r.Bar.Update(r.n, r.Total, fmt.Sprintf("%s / %s", Bytes(r.n), Bytes(r.Total)))
	return n, err
}

// Bytes formats a size.
func Bytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
