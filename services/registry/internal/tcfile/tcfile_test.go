package tcfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/testutil/fuzzbound"
	"github.com/assayhq/assay/services/registry/internal/canon"
	"github.com/assayhq/assay/services/registry/internal/testcases"
)

var noLimits = Limits{}

func compact(o *canon.Object) string {
	if o == nil {
		return "<nil>"
	}
	return string(canon.AppendCompact(nil, o))
}

// rowView is a row flattened for table comparisons.
type rowView struct{ Data, Flags, Tags, Meta, SourceID string }

func view(rows []testcases.Row) []rowView {
	out := make([]rowView, len(rows))
	for i, r := range rows {
		out[i] = rowView{compact(r.Data), compact(r.Flags), compact(r.Tags), compact(r.Meta), r.SourceID}
	}
	return out
}

func requireErr(t *testing.T, err error, kind errs.Kind, code, msgPart string) {
	t.Helper()
	require.Error(t, err)
	e := errs.From(err)
	assert.Equal(t, kind, e.Kind, e.Error())
	assert.Equal(t, code, e.Code)
	assert.Contains(t, e.Msg, msgPart)
}

func TestReadCSV(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []rowView
	}{
		{"cells are strings, order kept", "b,a\n1,x\n2.0,\n",
			[]rowView{{Data: `{"b":"1","a":"x"}`, Flags: "<nil>", Tags: "<nil>", Meta: "<nil>"},
				{Data: `{"b":"2.0","a":""}`, Flags: "<nil>", Tags: "<nil>", Meta: "<nil>"}}},
		{"BOM, CRLF, quoting", "\xef\xbb\xbfq,a\r\n\"x, \"\"y\"\"\",\"multi\nline\"\r\n",
			[]rowView{{Data: `{"q":"x, \"y\"","a":"multi\nline"}`, Flags: "<nil>", Tags: "<nil>", Meta: "<nil>"}}},
		{"short rows give null", "a,b,c\n1\n",
			[]rowView{{Data: `{"a":"1","b":null,"c":null}`, Flags: "<nil>", Tags: "<nil>", Meta: "<nil>"}}},
		{"bare quote kept like Python", "a\n5\" screen\n",
			[]rowView{{Data: `{"a":"5\" screen"}`, Flags: "<nil>", Tags: "<nil>", Meta: "<nil>"}}},
		{"header only", "a,b\n", []rowView{}},
		{"reserved columns", "__id__,q,__dedup_id__,__flags__,__tags__,__meta__\n" +
			"abc,1,d1,\"{\"\"f\"\":true}\",,\"{\"\"m\"\":[1]}\"\n" +
			",2,,,\"{\"\"t\"\":\"\"x\"\"}\",\n",
			[]rowView{
				{Data: `{"q":"1","testcase_dedup_id":"d1"}`, Flags: `{"f":true}`, Tags: "<nil>", Meta: `{"m":[1]}`, SourceID: "abc"},
				{Data: `{"q":"2","testcase_dedup_id":""}`, Flags: "<nil>", Tags: `{"t":"x"}`, Meta: "<nil>"},
			}},
		{"existing testcase_dedup_id wins over __dedup_id__", "testcase_dedup_id,__dedup_id__,q\nkeep,drop,1\n,use,2\n",
			[]rowView{
				{Data: `{"testcase_dedup_id":"keep","q":"1"}`, Flags: "<nil>", Tags: "<nil>", Meta: "<nil>"},
				{Data: `{"testcase_dedup_id":"use","q":"2"}`, Flags: "<nil>", Tags: "<nil>", Meta: "<nil>"},
			}},
		{"blank lines skipped", "a\n\n1\n\n", []rowView{{Data: `{"a":"1"}`, Flags: "<nil>", Tags: "<nil>", Meta: "<nil>"}}},
		// Python's lenient csv: after a closing quote, text continues the
		// cell unquoted, and the line still ends the row (no merged rows).
		{"text after a closing quote", "a,b\n\"x\" y,1\n2,3\n",
			[]rowView{{Data: `{"a":"x y","b":"1"}`, Flags: "<nil>", Tags: "<nil>", Meta: "<nil>"},
				{Data: `{"a":"2","b":"3"}`, Flags: "<nil>", Tags: "<nil>", Meta: "<nil>"}}},
		{"doubled quote then text", "a,b\n\"x\"\"y\"z,1\n",
			[]rowView{{Data: `{"a":"x\"yz","b":"1"}`, Flags: "<nil>", Tags: "<nil>", Meta: "<nil>"}}},
		{"quoted cell closed on a later line", "a,b\n\"x\n\ny\",1\n2,3",
			[]rowView{{Data: `{"a":"x\n\ny","b":"1"}`, Flags: "<nil>", Tags: "<nil>", Meta: "<nil>"},
				{Data: `{"a":"2","b":"3"}`, Flags: "<nil>", Tags: "<nil>", Meta: "<nil>"}}},
		{"empty last cell at end of file", "a,b\n1,", []rowView{{Data: `{"a":"1","b":""}`, Flags: "<nil>", Tags: "<nil>", Meta: "<nil>"}}},
		{"empty quoted cell", "a,b\n\"\",\"\"\n", []rowView{{Data: `{"a":"","b":""}`, Flags: "<nil>", Tags: "<nil>", Meta: "<nil>"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := ReadCSV(strings.NewReader(tt.in), noLimits)
			require.NoError(t, err)
			assert.Equal(t, tt.want, view(rows))
		})
	}
}

func TestReadCSVErrors(t *testing.T) {
	tests := []struct {
		name, in, msg string
		lim           Limits
		kind          errs.Kind
	}{
		{"empty", "", "header line is required", noLimits, errs.Invalid},
		{"BOM only", "\xef\xbb\xbf", "header line is required", noLimits, errs.Invalid},
		{"ragged", "a,b\n1,2\n1,2,3\n", "line 3: 3 cells, but the header has 2 columns", noLimits, errs.Invalid},
		{"ragged after multi-line cell", "a\n\"x\ny\"\n1,2\n", "line 4:", noLimits, errs.Invalid},
		// An unterminated quote used to swallow every following row into
		// one cell and answer 200.
		{"unterminated quote", "a,b\n1,2\n3,\"x\n4,5\n6,7\n", "line 3: the quoted cell in column 2 is never closed", noLimits, errs.Invalid},
		{"unterminated quote in the header", "a,\"b\n1,2\n", "line 1: the quoted cell in column 2 is never closed", noLimits, errs.Invalid},
		{"unterminated quote at the end", "a\n\"", "line 2: the quoted cell in column 1 is never closed", noLimits, errs.Invalid},
		{"unterminated quote past the byte limit", "a\n\"" + strings.Repeat("x", 100), "file exceeds the limit of 50 bytes", Limits{MaxBytes: 50}, errs.TooLarge},
		{"bad UTF-8 cell", "a,b\n1,\xff\n", `line 2, column "b": invalid UTF-8`, noLimits, errs.Invalid},
		{"bad UTF-8 header", "a,\xff\n", "line 1: column 2 of the header is not valid UTF-8", noLimits, errs.Invalid},
		{"duplicate header", "a,b,a\n", `line 1: duplicate column "a"`, noLimits, errs.Invalid},
		{"flags not an object", "q,__flags__\n1,[1]\n", `line 2, column "__flags__": the cell must be empty or a JSON object`, noLimits, errs.Invalid},
		{"meta not JSON", "q,__meta__\n1,{oops\n", `line 2, column "__meta__"`, noLimits, errs.Invalid},
		{"too many rows", "a\n1\n2\n3\n", "file exceeds the limit of 2 rows", Limits{MaxRows: 2}, errs.TooLarge},
		{"too many bytes", "a\n" + strings.Repeat("x\n", 100), "file exceeds the limit of 50 bytes", Limits{MaxBytes: 50}, errs.TooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadCSV(strings.NewReader(tt.in), tt.lim)
			code := "testsets.bad_file"
			if tt.kind == errs.TooLarge {
				code = "testsets.too_large"
			}
			requireErr(t, err, tt.kind, code, tt.msg)
		})
	}
}

func TestLimitsAtTheEdge(t *testing.T) {
	in := "a\n1\n2\n"
	rows, err := ReadCSV(strings.NewReader(in), Limits{MaxRows: 2, MaxBytes: int64(len(in))})
	require.NoError(t, err)
	assert.Len(t, rows, 2)
	_, err = ReadCSV(strings.NewReader(in), Limits{MaxBytes: int64(len(in) - 1)})
	requireErr(t, err, errs.TooLarge, "testsets.too_large", "bytes")

	js := `[{"a":1},{"a":2}]`
	rows, err = ReadJSON(strings.NewReader(js), Limits{MaxRows: 2, MaxBytes: int64(len(js))})
	require.NoError(t, err)
	assert.Len(t, rows, 2)
	_, err = ReadJSON(strings.NewReader(js), Limits{MaxBytes: int64(len(js) - 1)})
	requireErr(t, err, errs.TooLarge, "testsets.too_large", "bytes")
	_, err = ReadJSON(strings.NewReader(js), Limits{MaxRows: 1})
	requireErr(t, err, errs.TooLarge, "testsets.too_large", "limit of 1 rows")
}

// countingReader records how much of its input was consumed.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func TestByteLimitStopsReading(t *testing.T) {
	big := "a\n" + strings.Repeat("0123456789\n", 1<<20) // ~11 MiB
	cr := &countingReader{r: strings.NewReader(big)}
	_, err := ReadCSV(cr, Limits{MaxBytes: 1000})
	requireErr(t, err, errs.TooLarge, "testsets.too_large", "limit of 1000 bytes")
	assert.LessOrEqual(t, cr.n, int64(1001), "read past the limit")

	cr = &countingReader{r: strings.NewReader("[" + strings.Repeat(`{"a":"b"},`, 1<<20) + "{}]")}
	_, err = ReadJSON(cr, Limits{MaxBytes: 1000})
	requireErr(t, err, errs.TooLarge, "testsets.too_large", "limit of 1000 bytes")
	assert.LessOrEqual(t, cr.n, int64(1001))
}

// A wide header with a single row must not cost a slab of 256 rows of
// that width: a 59 KB file with a 10,000-column header allocated 84 MB (a
// 689 KB one, 847 MB), which a few concurrent uploads turn into an OOM.
func TestReadCSVWideHeaderAllocatesPerRow(t *testing.T) {
	var b strings.Builder
	for i := range 10000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "c%d", i)
	}
	b.WriteString("\n1\n")
	in := b.String()
	var rows []testcases.Row
	var err error
	got := fuzzbound.Alloc(func() { rows, err = ReadCSV(strings.NewReader(in), noLimits) })
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Len(t, rows[0].Data.Members, 10000)
	assert.LessOrEqual(t, got, uint64(64*len(in)+(1<<20)), "bytes allocated for a %d-byte file", len(in))
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestReadFailure(t *testing.T) {
	_, err := ReadCSV(failingReader{}, noLimits)
	requireErr(t, err, errs.Invalid, "testsets.bad_file", "connection reset")
	_, err = ReadJSON(failingReader{}, noLimits)
	requireErr(t, err, errs.Invalid, "testsets.bad_file", "connection reset")
}

func TestReadJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []rowView
	}{
		{"order and literals kept", `[{"b":1.0,"a":{"z":1,"y":[true,null]}}, {"x":"é"}]`,
			[]rowView{
				{Data: `{"b":1.0,"a":{"z":1,"y":[true,null]}}`, Flags: "<nil>", Tags: "<nil>", Meta: "<nil>"},
				{Data: `{"x":"é"}`, Flags: "<nil>", Tags: "<nil>", Meta: "<nil>"},
			}},
		{"BOM and whitespace", "\xef\xbb\xbf \n[ ] \n", []rowView{}},
		{"reserved keys", `[{"__id__":"0190f0a0-0000-7000-8000-000000000001","q":1,"__dedup_id__":"d","__flags__":{"f":1},"__tags__":null,"__meta__":{}}]`,
			[]rowView{{Data: `{"q":1,"testcase_dedup_id":"d"}`, Flags: `{"f":1}`, Tags: "<nil>", Meta: `{}`, SourceID: "0190f0a0-0000-7000-8000-000000000001"}}},
		{"non-string __id__ kept as text", `[{"__id__":5}]`,
			[]rowView{{Data: `{}`, Flags: "<nil>", Tags: "<nil>", Meta: "<nil>", SourceID: "5"}}},
		{"duplicate keys: first position, last value", `[{"a":1,"b":2,"a":3}]`,
			[]rowView{{Data: `{"a":3,"b":2}`, Flags: "<nil>", Tags: "<nil>", Meta: "<nil>"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := ReadJSON(strings.NewReader(tt.in), noLimits)
			require.NoError(t, err)
			assert.Equal(t, tt.want, view(rows))
		})
	}
}

func TestReadJSONErrors(t *testing.T) {
	tests := []struct{ name, in, msg string }{
		{"empty", "", "the file is empty"},
		{"whitespace", "  \n", "the file is empty"},
		{"object root", `{"a":1}`, "the top-level value must be an array of objects"},
		{"string root", `"x"`, "the top-level value must be an array of objects"},
		{"number root beyond float64 (found by FuzzReadJSON)", `1e7000`, "the top-level value must be an array of objects"},
		{"non-object item", `[{"a":1},{"b":2},{"c":3},4]`, "item 3 is not an object"},
		{"null item", `[null]`, "item 0 is not an object"},
		{"array item", `[[]]`, "item 0 is not an object"},
		{"malformed item", `[{"a":1},{"a":}]`, "item 1: invalid JSON near byte offset 13"},
		{"truncated", `[{"a":1}`, "unexpected end of file"},
		{"truncated item", `[{"a":`, "item 0: unexpected end of file"},
		{"missing comma", `[{} {}]`, "item 1: invalid JSON"},
		{"trailing data", `[] {}`, "unexpected data after the array"},
		{"trailing number beyond float64", `[] 1e7000`, "unexpected data after the array"},
		{"trailing garbage", `[] x`, "after the array: invalid JSON"},
		{"bad UTF-8", "[{\"a\":\"\xff\"}]", "item 0: invalid UTF-8"},
		{"tags not an object", `[{"__tags__":"x"}]`, "item 0: __tags__ must be a JSON object or null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadJSON(strings.NewReader(tt.in), noLimits)
			requireErr(t, err, errs.Invalid, "testsets.bad_file", tt.msg)
		})
	}
}

func obj(t testing.TB, s string) *canon.Object {
	t.Helper()
	o, err := canon.ParseObject([]byte(s))
	require.NoError(t, err)
	return o
}

var (
	id1 = uuid.MustParse("3255efb0-0544-5055-81c0-9bae89a1c912")
	id2 = uuid.MustParse("e5dcf362-5485-5bed-bb1f-2511098d4a8e")
)

func exportRows(t *testing.T) []testcases.Row {
	return []testcases.Row{
		{ID: id1, Data: obj(t, `{"q":"2+2?","n":1.50,"testcase_dedup_id":"d1","obj":{"k":[1,"é"]},"ok":true,"none":null}`),
			Tags: obj(t, `{"t":"x"}`)},
		{ID: id2, Data: obj(t, `{"q":"a,b","__dedup_id__":"legacy","testcase_dedup_id":"dropped","ok":false}`)},
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, exportRows(t)))
	assert.Equal(t, `[`+
		`{"q":"2+2?","n":1.50,"obj":{"k":[1,"é"]},"ok":true,"none":null,"__dedup_id__":"d1","__id__":"3255efb0-0544-5055-81c0-9bae89a1c912","__tags__":{"t":"x"}},`+
		`{"q":"a,b","__dedup_id__":"legacy","ok":false,"__id__":"e5dcf362-5485-5bed-bb1f-2511098d4a8e"}`+
		`]`, b.String())

	b.Reset()
	require.NoError(t, WriteJSON(&b, nil))
	assert.Equal(t, `[]`, b.String())
}

// TestWriteCSV: the header is the union of the rows' exported keys in the
// order they are first met, so a file's columns come back in the order of
// the upload, as in WriteJSON (the compatible platform sorts them).
func TestWriteCSV(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteCSV(&b, exportRows(t)))
	assert.Equal(t,
		"q,n,obj,ok,none,__dedup_id__,__id__,__tags__\n"+
			"2+2?,1.50,\"{\"\"k\"\":[1,\"\"é\"\"]}\",True,,d1,3255efb0-0544-5055-81c0-9bae89a1c912,\"{\"\"t\"\":\"\"x\"\"}\"\n"+
			"\"a,b\",,,False,,legacy,e5dcf362-5485-5bed-bb1f-2511098d4a8e,\n",
		b.String())

	b.Reset()
	require.NoError(t, WriteCSV(&b, nil))
	assert.Equal(t, "", b.String())
}

// TestCSVRoundTrip: what we export, we import back with the same data,
// ids as SourceID, and reserved columns restored (which the compatible platform
// cannot do for __flags__/__tags__/__meta__).
func TestCSVRoundTrip(t *testing.T) {
	rows := []testcases.Row{
		{ID: id1, Data: obj(t, `{"q":"x, \"y\"\nz","testcase_dedup_id":"d1"}`), Flags: obj(t, `{"f":true}`), Meta: obj(t, `{"m":{"n":[1,2]}}`)},
		{ID: id2, Data: obj(t, `{"q":"é😀","testcase_dedup_id":"d2"}`)},
	}
	var b bytes.Buffer
	require.NoError(t, WriteCSV(&b, rows))
	back, err := ReadCSV(&b, noLimits)
	require.NoError(t, err)
	assert.Equal(t, []rowView{
		{Data: `{"q":"x, \"y\"\nz","testcase_dedup_id":"d1"}`, Flags: `{"f":true}`, Tags: "<nil>", Meta: `{"m":{"n":[1,2]}}`, SourceID: id1.String()},
		{Data: `{"q":"é😀","testcase_dedup_id":"d2"}`, Flags: "<nil>", Tags: "<nil>", Meta: "<nil>", SourceID: id2.String()},
	}, view(back))
}

// TestCSVRoundTripColumnStartingWithBOM: a first column whose name starts
// with U+FEFF keeps its name through export and import; unquoted, the
// import would take it for the file's byte-order mark.
func TestCSVRoundTripColumnStartingWithBOM(t *testing.T) {
	for _, write := range []func(io.Writer, []testcases.Row) error{WriteCSV, WriteCSVData} {
		rows := []testcases.Row{{ID: id1, Data: obj(t, `{"\ufeffq\"":"1","":"2"}`)}}
		var b bytes.Buffer
		require.NoError(t, write(&b, rows))
		back, err := ReadCSV(&b, noLimits)
		require.NoError(t, err, b.String())
		require.Len(t, back, 1)
		assert.Equal(t, canonStr(rows[0].Data), canonStr(back[0].Data))
	}
	var b bytes.Buffer
	require.NoError(t, WriteCSVData(&b, []testcases.Row{{ID: id1, Data: obj(t, `{"\ufeff":"1"}`)}}))
	assert.Equal(t, "\"\ufeff\"\n1\n", b.String())
}

func TestFileName(t *testing.T) {
	tests := []struct{ name, def, typ, want string }{
		{"x", "revision_1", "csv", "x.csv"},
		{"x.csv", "revision_1", "csv", "x.csv"},
		{"X.CSV", "revision_1", "csv", "X.CSV"},
		{"x.csv", "revision_1", "json", "x.csv.json"},
		{"", "testset_abc", "json", "testset_abc.json"},
		{"a\"b\r\n/c\\d", "t", "csv", "a_b___c_d.csv"},
		{"é", "t", "csv", "é.csv"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, FileName(tt.name, tt.def, tt.typ), tt.name)
	}
}

// benchCSV is 10,000 rows × 5 columns, about 200 bytes per row.
func benchCSV() []byte {
	var b bytes.Buffer
	b.WriteString("question,answer,context,difficulty,testcase_dedup_id\n")
	for i := range 10000 {
		fmt.Fprintf(&b, "\"What is %d plus %d, expressed in decimal notation?\",%d,\"Arithmetic drill %d from the warm-up section, answer with digits only\",easy,%012x\n",
			i, i, 2*i, i, i)
	}
	return b.Bytes()
}

func BenchmarkReadCSV10k(b *testing.B) {
	data := benchCSV()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		rows, err := ReadCSV(bytes.NewReader(data), Limits{MaxRows: 100000, MaxBytes: 100 << 20})
		if err != nil || len(rows) != 10000 {
			b.Fatal(err, len(rows))
		}
	}
}

func BenchmarkWriteCSV10k(b *testing.B) {
	rows, err := ReadCSV(bytes.NewReader(benchCSV()), noLimits)
	require.NoError(b, err)
	testcases.AssignIDs(uuid.New(), rows)
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteCSV(io.Discard, rows); err != nil {
			b.Fatal(err)
		}
	}
}
