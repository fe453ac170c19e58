package tcfile

import (
	"bytes"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/testutil/fuzzbound"
	"github.com/assayhq/assay/services/registry/internal/canon"
	"github.com/assayhq/assay/services/registry/internal/testcases"
)

var fuzzLimits = Limits{MaxRows: 1000, MaxBytes: 1 << 20}

var fuzzSet = uuid.MustParse("0190f0a0-0000-7000-8000-000000000001")

// fileBound is the allocation budget of one import: the parsed rows are a
// few times the file, never the file times its width.
var fileBound = fuzzbound.Bound{PerByte: 512, Fixed: 2 << 20}

// Where a malformed file is wrong, as the package documents: the CSV line,
// the JSON item or byte offset, or the file as a whole.
var (
	csvWhere  = regexp.MustCompile(`^(line \d+|the file is empty)`)
	jsonWhere = regexp.MustCompile(`^(item \d+|invalid JSON near byte offset \d+|unexpected end of file|at the end of the array|after the array|unexpected data after the array at byte offset \d+|the file is empty|the top-level value must be an array)`)
)

// checkErr fails unless err is a client error this package documents: 413
// naming the limit, or 400 whose message starts with where the file is bad.
func checkErr(t *testing.T, err error, where *regexp.Regexp) {
	t.Helper()
	e, ok := err.(*errs.Error)
	if !ok {
		t.Fatalf("error is %T, not *errs.Error: %v", err, err)
	}
	switch {
	case e.Kind == errs.TooLarge:
	case e.Kind == errs.Invalid && e.Code == "testsets.bad_file" && where.MatchString(e.Msg):
	default:
		t.Fatalf("unexpected error (kind %v, code %s), or it does not say where the file is bad: %q", e.Kind, e.Code, e.Msg)
	}
}

func canonStr(o *canon.Object) string {
	if o == nil {
		return "<nil>"
	}
	return string(canon.AppendCanonical(nil, o))
}

// dataKeys is the sorted column names of a row's data.
func dataKeys(o *canon.Object) string {
	var ks []string
	for _, m := range o.Members {
		ks = append(ks, strconv.Quote(m.Key))
	}
	slices.Sort(ks)
	return strings.Join(ks, ",")
}

// FuzzReadCSV: never panics; fails only with a documented *errs.Error that
// names the line; allocates linearly in the file; a parsed file exports and
// re-imports with the same rows, column names, ids and metadata.
func FuzzReadCSV(f *testing.F) {
	f.Add([]byte("a,b\n1,2\n"))
	f.Add([]byte("\xef\xbb\xbfa\n\"x\ny\"\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var rows []testcases.Row
		var err error
		fileBound.Check(t, len(in), func() { rows, err = ReadCSV(bytes.NewReader(in), fuzzLimits) })
		if err != nil {
			checkErr(t, err, csvWhere)
			return
		}
		for _, r := range rows {
			if r.Data == nil {
				t.Fatal("nil data")
			}
		}
		testcases.AssignIDs(fuzzSet, rows)
		var out bytes.Buffer
		if err := WriteCSV(&out, rows); err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			if out.Len() != 0 {
				t.Fatalf("no rows exported as %q", out.String())
			}
			return // an empty export is an empty body, not a valid import
		}
		back, err := ReadCSV(&out, Limits{})
		if err != nil {
			t.Fatalf("re-import failed: %v\n%s", err, out.String())
		}
		if len(back) != len(rows) {
			t.Fatalf("%d rows became %d", len(rows), len(back))
		}
		for i := range rows {
			if k, kb := dataKeys(rows[i].Data), dataKeys(back[i].Data); k != kb {
				t.Fatalf("row %d: columns %s became %s", i, k, kb)
			}
			if back[i].SourceID != rows[i].ID.String() {
				t.Fatalf("row %d: __id__ %q, want %s", i, back[i].SourceID, rows[i].ID)
			}
			for _, p := range [][2]*canon.Object{{rows[i].Flags, back[i].Flags}, {rows[i].Tags, back[i].Tags}, {rows[i].Meta, back[i].Meta}} {
				if canonStr(p[0]) != canonStr(p[1]) {
					t.Fatalf("row %d: metadata %s became %s", i, canonStr(p[0]), canonStr(p[1]))
				}
			}
		}
	})
}

// FuzzReadJSON: never panics; fails only with a documented *errs.Error that
// names the item or offset; allocates linearly in the file; a parsed file
// exports and re-imports with identical data and metadata.
func FuzzReadJSON(f *testing.F) {
	f.Add([]byte(`[{"a":1}]`))
	f.Add([]byte(`[{"__id__":"x","__dedup_id__":"d","testcase_dedup_id":""}]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var rows []testcases.Row
		var err error
		fileBound.Check(t, len(in), func() { rows, err = ReadJSON(bytes.NewReader(in), fuzzLimits) })
		if err != nil {
			checkErr(t, err, jsonWhere)
			return
		}
		testcases.AssignIDs(fuzzSet, rows)
		var out bytes.Buffer
		if err := WriteJSON(&out, rows); err != nil {
			t.Fatal(err)
		}
		back, err := ReadJSON(&out, Limits{})
		if err != nil {
			t.Fatalf("re-import failed: %v\n%s", err, out.String())
		}
		if len(back) != len(rows) {
			t.Fatalf("%d rows became %d", len(rows), len(back))
		}
		for i := range rows {
			for _, p := range [][2]*canon.Object{{rows[i].Data, back[i].Data}, {rows[i].Flags, back[i].Flags}, {rows[i].Tags, back[i].Tags}, {rows[i].Meta, back[i].Meta}} {
				if canonStr(p[0]) != canonStr(p[1]) {
					t.Fatalf("row %d: %s became %s", i, canonStr(p[0]), canonStr(p[1]))
				}
			}
			if back[i].SourceID != rows[i].ID.String() {
				t.Fatalf("row %d: __id__ %q, want %s", i, back[i].SourceID, rows[i].ID)
			}
		}
	})
}
