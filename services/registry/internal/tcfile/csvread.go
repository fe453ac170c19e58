package tcfile

import (
	"bufio"
	"bytes"
	"io"
)

// csvReader splits CSV records the way Python's csv module does with its
// default (excel) dialect and strict=False, which is what the compatible platform
// reads uploads with, with one difference: a quoted cell still open at the
// end of the file is an error instead of a cell holding the rest of the
// file. encoding/csv cannot do this: strict, it refuses the bare quotes
// Python keeps (`5" screen`); with LazyQuotes, a quote that never closes,
// or text after a closing quote (`"x" y`), silently merges every following
// line into one cell.
//
// The rules, per cell:
//   - a cell not starting with a quote runs to the next comma or line end;
//     quotes inside it are kept literally;
//   - a cell starting with a quote runs to the next lone quote; newlines and
//     commas inside are data, and a doubled quote is one quote; text after
//     the closing quote continues the cell unquoted, up to the next comma or
//     line end (Python: `"x" y` is `x y`).
//
// Line ends follow encoding/csv, as before: "\r\n" counts as "\n" (inside
// quoted cells too), a lone "\r" is data, and blank lines are skipped.
type csvReader struct {
	br      *bufio.Reader
	numLine int    // lines read so far
	raw     []byte // a line longer than the bufio buffer
	buf     []byte // the record's cells, back to back
	ends    []int  // end offset in buf of each cell
	rec     []string
	// quoteLine is the line of the last opening quote: the one to name
	// when a quoted cell is never closed.
	quoteLine int
}

// csvState is where the parser is inside a cell.
type csvState int

const (
	startCell  csvState = iota // nothing of the cell read yet
	inCell                     // in an unquoted cell, or after a quoted part
	inQuoted                   // inside quotes
	quoteSeen                  // a quote inside quotes: closing, or the first of two
	recordDone                 // the line end closed the record
)

// readLine returns the next line with its "\n" (missing only at the end of
// the file), "\r\n" turned into "\n". The slice is valid until the next
// call. err is io.EOF only with an empty line.
func (r *csvReader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.raw = append(r.raw[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = r.br.ReadSlice('\n')
			r.raw = append(r.raw, line...)
		}
		line = r.raw
	}
	if len(line) > 0 && err == io.EOF {
		err = nil
		// As encoding/csv: a "\r" ending the file is dropped.
		if line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
	}
	if err != nil {
		return nil, err
	}
	r.numLine++
	if n := len(line); n >= 2 && line[n-2] == '\r' && line[n-1] == '\n' {
		line[n-2] = '\n'
		line = line[:n-1]
	}
	return line, nil
}

// Read returns the next record and the line it starts on. rec is reused by
// the next call. At the end of the input it returns io.EOF; a quoted cell
// left open at the end is a 400 naming its line and column; read errors
// are returned as they are.
func (r *csvReader) Read() (rec []string, line int, err error) {
	var l []byte
	for {
		if l, err = r.readLine(); err != nil {
			return nil, 0, err
		}
		if len(l) > 0 && l[0] != '\n' {
			break
		}
	}
	line = r.numLine
	r.buf, r.ends = r.buf[:0], r.ends[:0]
	state := startCell
	for {
		state = r.scan(l, state)
		if state == recordDone {
			break
		}
		if state != inQuoted {
			// The file ended without a newline: that ends the record.
			r.ends = append(r.ends, len(r.buf))
			break
		}
		next, err := r.readLine()
		if err == io.EOF {
			return nil, 0, badFile("line %d: the quoted cell in column %d is never closed (a quote inside a quoted cell is written twice: \"\")",
				r.quoteLine, len(r.ends)+1)
		}
		if err != nil {
			return nil, 0, err
		}
		l = next
	}
	// One string for the record, cells as substrings: one allocation.
	s := string(r.buf)
	r.rec = r.rec[:0]
	prev := 0
	for _, end := range r.ends {
		r.rec = append(r.rec, s[prev:end])
		prev = end
	}
	return r.rec, line, nil
}

// scan feeds one line to the parser, starting in state, and returns the
// state at its end: recordDone if the line's newline ended the record.
func (r *csvReader) scan(l []byte, state csvState) csvState {
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch state {
		case startCell:
			switch c {
			case '"':
				state = inQuoted
				r.quoteLine = r.numLine
				continue
			case ',':
				r.ends = append(r.ends, len(r.buf))
				continue
			case '\n':
				r.ends = append(r.ends, len(r.buf))
				return recordDone
			}
			state = inCell
			fallthrough
		case inCell:
			// Copy up to the next comma or newline in one go.
			j := bytes.IndexAny(l[i:], ",\n")
			if j < 0 {
				r.buf = append(r.buf, l[i:]...)
				return inCell
			}
			r.buf = append(r.buf, l[i:i+j]...)
			r.ends = append(r.ends, len(r.buf))
			i += j
			if l[i] == '\n' {
				return recordDone
			}
			state = startCell
		case inQuoted:
			j := bytes.IndexByte(l[i:], '"')
			if j < 0 {
				r.buf = append(r.buf, l[i:]...)
				return inQuoted
			}
			r.buf = append(r.buf, l[i:i+j]...)
			i += j
			state = quoteSeen
		case quoteSeen:
			switch c {
			case '"':
				r.buf = append(r.buf, '"')
				state = inQuoted
			case ',':
				r.ends = append(r.ends, len(r.buf))
				state = startCell
			case '\n':
				r.ends = append(r.ends, len(r.buf))
				return recordDone
			default:
				// Python's lenient mode: the text goes on, unquoted.
				i--
				state = inCell
			}
		}
	}
	return state
}
