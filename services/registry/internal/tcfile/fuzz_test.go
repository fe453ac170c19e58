package tcfile

import (
	"bytes"
	"testing"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/registry/internal/canon"
	"github.com/assayhq/assay/services/registry/internal/testcases"
)

var fuzzLimits = Limits{MaxRows: 1000, MaxBytes: 1 << 20}

var fuzzSet = uuid.MustParse("0190f0a0-0000-7000-8000-000000000001")

// checkErr fails unless err is a client error this package documents.
func checkErr(t *testing.T, err error) {
	t.Helper()
	e, ok := err.(*errs.Error)
	if !ok {
		t.Fatalf("error is %T, not *errs.Error: %v", err, err)
	}
	if e.Kind != errs.Invalid && e.Kind != errs.TooLarge {
		t.Fatalf("unexpected kind %v: %v", e.Kind, e)
	}
}

func canonStr(o *canon.Object) string {
	if o == nil {
		return "<nil>"
	}
	return string(canon.AppendCanonical(nil, o))
}

// FuzzReadCSV: never panics; fails only with a documented *errs.Error; a
// parsed file exports and re-imports with the same rows, ids and metadata.
func FuzzReadCSV(f *testing.F) {
	f.Add([]byte("a,b\n1,2\n"))
	f.Add([]byte("\xef\xbb\xbfa\n\"x\ny\"\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		rows, err := ReadCSV(bytes.NewReader(in), fuzzLimits)
		if err != nil {
			checkErr(t, err)
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

// FuzzReadJSON: never panics; fails only with a documented *errs.Error; a
// parsed file exports and re-imports with identical data and metadata.
func FuzzReadJSON(f *testing.F) {
	f.Add([]byte(`[{"a":1}]`))
	f.Add([]byte(`[{"__id__":"x","__dedup_id__":"d","testcase_dedup_id":""}]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		rows, err := ReadJSON(bytes.NewReader(in), fuzzLimits)
		if err != nil {
			checkErr(t, err)
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
