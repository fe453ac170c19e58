// Package tcfile imports and exports testcases as CSV and JSON files
// in the compatible platform's formats. Imports stream: the input is read once, in
// small chunks, and reading stops as soon as a limit is crossed, so an
// oversized upload costs at most the limit in I/O and never sits in memory
// whole.
//
// Errors are *errs.Error values: a malformed file is 400 testsets.bad_file
// with a message naming the line (CSV) or item (JSON); a file over a limit
// is 413 testsets.too_large naming the limit.
package tcfile

import (
	"fmt"
	"io"
	"strings"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/registry/internal/canon"
	"github.com/assayhq/assay/services/registry/internal/testcases"
)

// Limits bound an import. A zero or negative field means no limit.
type Limits struct {
	MaxRows  int   // testcases per file
	MaxBytes int64 // bytes of the file as uploaded
	// What POST /simple/testsets/query inlines: testsets per answer, and
	// testcases per testset (testcase_ids stays whole). Zero takes
	// DefaultQueryTestsets and DefaultQueryTestcases.
	QueryTestsets, QueryTestcases int
}

// The defaults of Limits.QueryTestsets and Limits.QueryTestcases.
const (
	DefaultQueryTestsets  = 50
	DefaultQueryTestcases = 1000
)

// Reserved column names.
const (
	colID      = "__id__"
	colDedupID = "__dedup_id__"
	colFlags   = "__flags__"
	colTags    = "__tags__"
	colMeta    = "__meta__"
)

func badFile(format string, args ...any) error {
	return errs.New(errs.Invalid, "testsets.bad_file", fmt.Sprintf(format, args...))
}

func tooManyRows(max int) error {
	return errs.New(errs.TooLarge, "testsets.too_large", fmt.Sprintf("file exceeds the limit of %d rows", max))
}

// limitReader counts bytes and fails once more than max have been read, so
// callers see the 413 instead of an unbounded read. It never asks the
// underlying reader for more than one byte past the limit.
type limitReader struct {
	r   io.Reader
	max int64 // <= 0: unlimited
	n   int64
	err error // sticky: the 413 once the limit is crossed
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if l.max > 0 {
		if room := l.max + 1 - l.n; int64(len(p)) > room {
			p = p[:room]
		}
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.max > 0 && l.n > l.max {
		l.err = errs.New(errs.TooLarge, "testsets.too_large",
			fmt.Sprintf("file exceeds the limit of %d bytes", l.max))
		// The byte past the limit is not handed on: the caller must
		// never parse data beyond the limit.
		return n - int(l.n-l.max), l.err
	}
	return n, err
}

// popReserved moves the reserved columns out of a freshly imported row's
// data: __id__ to SourceID, __dedup_id__ to data.testcase_dedup_id (unless
// that is already truthy), and __flags__, __tags__, __meta__ to the row.
// obj converts a reserved value to an object (nil for absent) or fails.
func popReserved(r *testcases.Row, obj func(col string, v any) (*canon.Object, error)) error {
	d := r.Data
	if v, ok := d.Delete(colID); ok {
		switch s := v.(type) {
		case string:
			r.SourceID = s
		case nil:
		default:
			// A JSON file may hold a non-string __id__; keep its text so
			// it still reaches dedup (it can never parse as a UUID).
			r.SourceID = string(canon.AppendCompact(nil, v))
		}
	}
	if v, ok := d.Delete(colDedupID); ok {
		if cur, _ := d.Get(testcases.KeyDedupID); !testcases.Truthy(cur) {
			d.Set(testcases.KeyDedupID, v)
		}
	}
	for _, f := range []struct {
		col string
		dst **canon.Object
	}{{colFlags, &r.Flags}, {colTags, &r.Tags}, {colMeta, &r.Meta}} {
		v, ok := d.Delete(f.col)
		if !ok {
			continue
		}
		o, err := obj(f.col, v)
		if err != nil {
			return err
		}
		*f.dst = o
	}
	return nil
}

// FileName returns the download file name: name, or defaultBase when name
// is empty, with "."+fileType appended unless it already ends with it
// (case-insensitively). Unlike the compatible platform, "x.csv" stays "x.csv".
// Characters that could break a Content-Disposition header or name a path
// (control characters, quotes, backslashes, slashes) become "_".
func FileName(name, defaultBase, fileType string) string {
	if name == "" {
		name = defaultBase
	}
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' || r == '\\' || r == '/' {
			return '_'
		}
		return r
	}, name)
	ext := "." + fileType
	if fileType == "" || (len(name) >= len(ext) && strings.EqualFold(name[len(name)-len(ext):], ext)) {
		return name
	}
	return name + ext
}
