package testcases

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/registry/internal/canon"
)

var exampleSet = uuid.MustParse("0190f0a0-0000-7000-8000-000000000001")

func obj(t testing.TB, s string) *canon.Object {
	t.Helper()
	o, err := canon.ParseObject([]byte(s))
	require.NoError(t, err)
	return o
}

func compact(o *canon.Object) string { return string(canon.AppendCompact(nil, o)) }

// TestWorkedExample is the compatible platform's own example of testcase ids
// (two identical rows, one blob), through the simple-create path.
func TestWorkedExample(t *testing.T) {
	rows := []Row{
		{Data: obj(t, `{"question":"2+2?","answer":"4"}`)},
		{Data: obj(t, `{"question":"2+2?","answer":"4"}`)},
	}
	rows = AssignDedup(rows, true)
	AssignIDs(exampleSet, rows)
	require.Len(t, rows, 2)

	d0, _ := rows[0].Data.Get(KeyDedupID)
	d1, _ := rows[1].Data.Get(KeyDedupID)
	assert.Equal(t, "048fb38354ab", d0)
	assert.Equal(t, "420fa02bd3db", d1)
	assert.Equal(t, "3255efb0-0544-5055-81c0-9bae89a1c912", rows[0].ID.String())
	assert.Equal(t, "e5dcf362-5485-5bed-bb1f-2511098d4a8e", rows[1].ID.String())
	// The dedup id is appended after the original keys, as Python's dict does.
	assert.Equal(t, `{"question":"2+2?","answer":"4","testcase_dedup_id":"048fb38354ab"}`, compact(rows[0].Data))

	assert.Equal(t, "fee70cd2-c7e0-573c-8c74-7eb55c9d2cee",
		BlobID(nil, obj(t, `{"question":"2+2?","answer":"4"}`)).String())
}

func TestBlobID(t *testing.T) {
	// Expected values computed with the Python expression in BlobID's comment.
	tests := []struct {
		name string
		set  *uuid.UUID
		data string
		want string
	}{
		{"nil data no set", nil, ``, "9781e576-fbd9-586b-a1e9-7c87f1bd1575"},
		{"empty data equals nil data", nil, `{}`, "9781e576-fbd9-586b-a1e9-7c87f1bd1575"},
		{"empty data with set", &exampleSet, `{}`, "2b6708a5-73f9-5b71-b388-75dcc1af09ff"},
		{"key order does not matter", nil, `{"answer":"4","question":"2+2?"}`, "fee70cd2-c7e0-573c-8c74-7eb55c9d2cee"},
		{"floats and unicode", &exampleSet, `{"x":1.0,"y":1e-5,"z":"é😀","n":null,"b":[true,false]}`, "eba1e1c7-85c0-570c-ac31-1f30a2325bc0"},
		{"int", &exampleSet, `{"x":1}`, "23070135-8aa6-5bf9-a1e7-1bb4749df638"},
		{"float differs from int", &exampleSet, `{"x":1.0}`, "2c354fdd-97d7-5a2c-abf7-b426d4d1c370"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var data *canon.Object
			if tt.data != "" {
				data = obj(t, tt.data)
			}
			id := BlobID(tt.set, data)
			assert.Equal(t, tt.want, id.String())
			assert.Equal(t, uuid.Version(5), id.Version())
			assert.Equal(t, uuid.RFC4122, id.Variant())
		})
	}
}

func TestDedupID(t *testing.T) {
	tid := uuid.MustParse("fee70cd2-c7e0-573c-8c74-7eb55c9d2cee")
	assert.Equal(t, "048fb38354ab", DedupID(tid, 0))
	assert.Equal(t, "420fa02bd3db", DedupID(tid, 1))
}

func dedupOf(r Row) any { v, _ := r.Data.Get(KeyDedupID); return v }

func TestAssignDedup(t *testing.T) {
	explicit := "0190f0a0-0000-7000-8000-0000000000aa"
	explicitID := uuid.MustParse(explicit)
	tests := []struct {
		name     string
		jsonBody bool
		rows     []Row
		// want: compact data per output row; "<gen:tid:i>" placeholders are
		// replaced by DedupID(tid, i) where tid "blob" means the no-set blob id
		// of the data without dedup keys.
		want []string
	}{
		{
			name:     "existing dedup id kept",
			jsonBody: true,
			rows:     []Row{{Data: obj(t, `{"testcase_dedup_id":"mine","a":"1"}`)}},
			want:     []string{`{"a":"1","testcase_dedup_id":"mine"}`},
		},
		{
			name:     "json body moves __dedup_id__",
			jsonBody: true,
			rows:     []Row{{Data: obj(t, `{"__dedup_id__":"legacy","a":"1"}`)}},
			want:     []string{`{"a":"1","testcase_dedup_id":"legacy"}`},
		},
		{
			name:     "json body: testcase_dedup_id beats __dedup_id__",
			jsonBody: true,
			rows:     []Row{{Data: obj(t, `{"__dedup_id__":"legacy","testcase_dedup_id":"new"}`)}},
			want:     []string{`{"testcase_dedup_id":"new"}`},
		},
		{
			name:     "upload mode leaves __dedup_id__ alone",
			jsonBody: false,
			rows:     []Row{{Data: obj(t, `{"__dedup_id__":"legacy","testcase_dedup_id":"x"}`)}},
			want:     []string{`{"__dedup_id__":"legacy","testcase_dedup_id":"x"}`},
		},
		{
			name:     "non-string truthy dedup id kept as is",
			jsonBody: true,
			rows:     []Row{{Data: obj(t, `{"testcase_dedup_id":7}`)}},
			want:     []string{`{"testcase_dedup_id":7}`},
		},
		{
			name:     "falsy dedup id regenerated; testcase_id popped",
			jsonBody: true,
			rows:     []Row{{Data: obj(t, `{"a":"1","testcase_dedup_id":0,"testcase_id":"not-a-uuid"}`)}},
			want:     []string{`{"a":"1","testcase_dedup_id":"<blob:0>"}`},
		},
		{
			name:     "explicit testcase_id drives the dedup id",
			jsonBody: true,
			rows:     []Row{{Data: obj(t, `{"a":"1","testcase_id":"{`+explicit+`}"}`)}},
			want:     []string{`{"a":"1","testcase_dedup_id":"<explicit:0>"}`},
		},
		{
			name:     "json body never collapses",
			jsonBody: true,
			rows: []Row{
				{Data: obj(t, `{"a":"1","testcase_id":"`+explicit+`"}`)},
				{Data: obj(t, `{"a":"2","testcase_id":"`+explicit+`"}`)},
			},
			want: []string{`{"a":"1","testcase_dedup_id":"<explicit:0>"}`, `{"a":"2","testcase_dedup_id":"<explicit:1>"}`},
		},
		{
			name:     "upload collapses explicit ids: first position, last data",
			jsonBody: false,
			rows: []Row{
				{Data: obj(t, `{"a":"1"}`), SourceID: explicit},
				{Data: obj(t, `{"a":"x"}`)},
				{Data: obj(t, `{"a":"2"}`), SourceID: explicit},
				{Data: obj(t, `{"a":"x"}`)},
				{Data: obj(t, `{"a":"3","testcase_id":"`+explicit+`"}`)},
			},
			want: []string{
				`{"a":"3","testcase_dedup_id":"<explicit:4>"}`,
				`{"a":"x","testcase_dedup_id":"<blob:1>"}`,
				`{"a":"x","testcase_dedup_id":"<blob:3>"}`,
			},
		},
		{
			name:     "nil data becomes an object",
			jsonBody: true,
			rows:     []Row{{}},
			want:     []string{`{"testcase_dedup_id":"<blob:0>"}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Precompute expectations before AssignDedup edits the rows.
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i] = w
				var tid uuid.UUID
				var idx int
				for _, kind := range []string{"blob", "explicit"} {
					for idx = 0; idx < 10; idx++ {
						ph := fmt.Sprintf("<%s:%d>", kind, idx)
						if !strings.Contains(w, ph) {
							continue
						}
						if kind == "explicit" {
							tid = explicitID
						} else {
							d := obj(t, w)
							d.Delete(KeyDedupID)
							tid = BlobID(nil, d)
						}
						want[i] = strings.Replace(want[i], ph, DedupID(tid, idx), 1)
					}
				}
			}
			got := AssignDedup(tt.rows, tt.jsonBody)
			require.Len(t, got, len(want))
			for i := range got {
				assert.Equal(t, want[i], compact(got[i].Data), "row %d", i)
			}
		})
	}
}

func TestAssignDedupCollapseKeepsLastMetadata(t *testing.T) {
	id := "0190f0a0-0000-7000-8000-0000000000aa"
	rows := []Row{
		{Data: obj(t, `{"a":"1"}`), SourceID: id, Tags: obj(t, `{"first":true}`)},
		{Data: obj(t, `{"a":"2"}`), SourceID: id, Tags: obj(t, `{"last":true}`)},
	}
	got := AssignDedup(rows, false)
	require.Len(t, got, 1)
	assert.Equal(t, `{"last":true}`, compact(got[0].Tags))
}

func TestParsePythonUUID(t *testing.T) {
	// Cases and expectations produced by CPython 3.11's str(uuid.UUID(s)).
	cases := [][2]string{
		{"0190f0a0-0000-7000-8000-000000000001", "0190f0a0-0000-7000-8000-000000000001"},
		{"0190F0A0000070008000000000000001", "0190f0a0-0000-7000-8000-000000000001"},
		{"{0190f0a0-0000-7000-8000-000000000001}", "0190f0a0-0000-7000-8000-000000000001"},
		{"urn:uuid:0190f0a0-0000-7000-8000-000000000001", "0190f0a0-0000-7000-8000-000000000001"},
		{"0190f0a0-0000-7000-8000-00000000001", ""},
		{" 190f0a0000070008000000000000001", "0190f0a0-0000-7000-8000-000000000001"},
		{"+190f0a0000070008000000000000001", "0190f0a0-0000-7000-8000-000000000001"},
		{"-190f0a0000070008000000000000001", ""},
		{"0x90f0a0000007000800000000000000", "0090f0a0-0000-0700-0800-000000000000"},
		{"0x_0f0a0000007000800000000000000", "0000f0a0-0000-0700-0800-000000000000"},
		{"_190f0a0000070008000000000000001", ""},
		{"1_90f0a000007000800000000000001", ""},
		{"1__0f0a000007000800000000000001", ""},
		{"19_0f0a000007000800000000000001_", ""},
		{"0190f0a0-0000-7000-8000-00000000000g", ""},
		{"{{0190f0a0-0000-7000-8000-000000000001}}", "0190f0a0-0000-7000-8000-000000000001"},
		{"0190f0a0-urn:0000-7000-8000-000000000001", "0190f0a0-0000-7000-8000-000000000001"},
		{"\u00a0190f0a0000070008000000000000001", "0190f0a0-0000-7000-8000-000000000001"},
		{"\x1c190f0a0000070008000000000000001", ""},
		{"", ""},
		{"abc", ""},
		{"0190f0a000007000800000000000001\n", "00190f0a-0000-0700-0800-000000000001"},
		{"x190f0a0000070008000000000000001", ""},
		{"0x", ""},
		{"uuid:{0190f0a0-0000-7000-8000-000000000001}", "0190f0a0-0000-7000-8000-000000000001"},
		{"0190f0a0-0000-7000-8000-000000000001-", "0190f0a0-0000-7000-8000-000000000001"},
		{"é190f0a0000070008000000000000001", ""},
		{"+_90f0a0000070008000000000000001", ""},
		{"0x000000000000000000000000000000", "00000000-0000-0000-0000-000000000000"},
	}
	for _, c := range cases {
		id, ok := ParsePythonUUID(c[0])
		if c[1] == "" {
			assert.False(t, ok, "%q", c[0])
			continue
		}
		if assert.True(t, ok, "%q", c[0]) {
			assert.Equal(t, c[1], id.String(), "%q", c[0])
		}
	}
}

func TestTruthy(t *testing.T) {
	tests := []struct {
		v    any
		want bool
	}{
		{nil, false}, {false, false}, {true, true}, {"", false}, {"x", true},
		{json.Number("0"), false}, {json.Number("-0"), false}, {json.Number("0.0"), false},
		{json.Number("0e5"), false}, {json.Number("1e-400"), false}, {json.Number("1"), true},
		{json.Number("-0.5"), true}, {json.Number("1e400"), true},
		{canon.NewObject(0), false}, {obj(t, `{"a":1}`), true}, {[]any{}, false}, {[]any{nil}, true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Truthy(tt.v), "%#v", tt.v)
	}
}

func TestRowJSON(t *testing.T) {
	var r Row
	require.NoError(t, json.Unmarshal([]byte(`{"id":"0190f0a0-0000-7000-8000-000000000001","data":{"b":1.0,"a":"x"},"tags":{"t":true},"meta":null,"testset_id":"ignored"}`), &r))
	assert.Equal(t, exampleSet, r.ID)
	assert.Equal(t, `{"b":1.0,"a":"x"}`, compact(r.Data))
	assert.Nil(t, r.Flags)
	assert.Nil(t, r.Meta)
	out, err := json.Marshal(r)
	require.NoError(t, err)
	assert.Equal(t, `{"id":"0190f0a0-0000-7000-8000-000000000001","data":{"b":1.0,"a":"x"},"tags":{"t":true}}`, string(out))

	var empty Row
	require.NoError(t, json.Unmarshal([]byte(`{}`), &empty))
	require.NotNil(t, empty.Data)
	assert.Equal(t, 0, empty.Data.Len())

	for _, bad := range []string{`{"id":"nope","data":{}}`, `{"id":5}`, `{"data":[1]}`, `{"flags":"x"}`, `[]`, `null`} {
		var r Row
		err := json.Unmarshal([]byte(bad), &r)
		require.Error(t, err, bad)
		assert.Equal(t, errs.Unprocessable, errs.KindOf(err), bad)
	}
}

func TestDeltaJSON(t *testing.T) {
	var d Delta
	require.NoError(t, json.Unmarshal([]byte(`{
		"rows": {"add": [{"data": {"q": "new"}}],
		         "remove": ["0190f0a0-0000-7000-8000-000000000002"],
		         "replace": [{"id": "0190f0a0-0000-7000-8000-000000000001", "data": {"q": "r"}}]},
		"columns": {"add": ["c"], "remove": ["r"], "replace": [["old", "new"]]}}`), &d))
	assert.Len(t, d.Rows.Add, 1)
	assert.Equal(t, []uuid.UUID{uuid.MustParse("0190f0a0-0000-7000-8000-000000000002")}, d.Rows.Remove)
	assert.Equal(t, exampleSet, d.Rows.Replace[0].ID)
	assert.Equal(t, []string{"c"}, d.Columns.Add)
	assert.Equal(t, []string{"r"}, d.Columns.Remove)
	assert.Equal(t, [][2]string{{"old", "new"}}, d.Columns.Replace)

	var partial Delta
	require.NoError(t, json.Unmarshal([]byte(`{"rows":{"add":[{"data":{}}]}}`), &partial))
	assert.Len(t, partial.Rows.Add, 1)

	bad := []string{
		`{"columns":{"replace":[["only-one"]]}}`,
		`{"columns":{"replace":[["a",1]]}}`,
		`{"columns":{"add":"c"}}`,
		`{"rows":{"remove":["nope"]}}`,
		`{"rows":{"replace":[{"data":{}}]}}`,
		`{"rows":{"add":[{"data":"x"}]}}`,
		`[]`,
	}
	for _, b := range bad {
		var d Delta
		err := json.Unmarshal([]byte(b), &d)
		require.Error(t, err, b)
		assert.Equal(t, errs.Unprocessable, errs.KindOf(err), b)
	}
}

func TestApplyDelta(t *testing.T) {
	id1 := uuid.MustParse("00000000-0000-5000-8000-000000000001")
	id2 := uuid.MustParse("00000000-0000-5000-8000-000000000002")
	id3 := uuid.MustParse("00000000-0000-5000-8000-000000000003")
	base := func() []Row {
		return []Row{
			{ID: id1, Data: obj(t, `{"q":"1","old":"a","drop":"x"}`), Tags: obj(t, `{"t":true}`)},
			{ID: id2, Data: obj(t, `{"q":"2","old":"b"}`)},
			{ID: id3, Data: obj(t, `{"q":"3","c":"keep"}`)},
		}
	}
	tests := []struct {
		name  string
		delta string
		want  []string
	}{
		{"empty delta copies data", `{}`,
			[]string{`{"q":"1","old":"a","drop":"x"}`, `{"q":"2","old":"b"}`, `{"q":"3","c":"keep"}`}},
		{"columns: remove, rename in place, add missing", `{"columns":{"remove":["drop"],"replace":[["old","new"]],"add":["c"]}}`,
			[]string{`{"q":"1","new":"a","c":""}`, `{"q":"2","new":"b","c":""}`, `{"q":"3","c":"keep"}`}},
		{"renames are not chained", `{"columns":{"replace":[["q","old"],["old","q"]]}}`,
			[]string{`{"old":"1","q":"a","drop":"x"}`, `{"old":"2","q":"b"}`, `{"old":"3","c":"keep"}`}},
		{"rename onto an existing column: first position, later value", `{"columns":{"replace":[["old","q"]]}}`,
			[]string{`{"q":"a","drop":"x"}`, `{"q":"b"}`, `{"q":"3","c":"keep"}`}},
		{"rows: replace in place, remove, add at end without column ops",
			`{"rows":{"replace":[{"id":"` + id2.String() + `","data":{"q":"R"}}],"remove":["` + id1.String() + `"],"add":[{"data":{"q":"A"}}]},"columns":{"add":["c"]}}`,
			[]string{`{"q":"R"}`, `{"q":"3","c":"keep"}`, `{"q":"A"}`}},
		{"remove beats replace", `{"rows":{"replace":[{"id":"` + id1.String() + `","data":{"q":"R"}}],"remove":["` + id1.String() + `"]}}`,
			[]string{`{"q":"2","old":"b"}`, `{"q":"3","c":"keep"}`}},
		{"unknown ids are ignored", `{"rows":{"remove":["` + uuid.Nil.String() + `"]}}`,
			[]string{`{"q":"1","old":"a","drop":"x"}`, `{"q":"2","old":"b"}`, `{"q":"3","c":"keep"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d Delta
			require.NoError(t, json.Unmarshal([]byte(tt.delta), &d))
			b := base()
			got := ApplyDelta(b, d)
			require.Len(t, got, len(tt.want))
			for i, r := range got {
				assert.Equal(t, tt.want[i], compact(r.Data), "row %d", i)
				assert.Equal(t, uuid.Nil, r.ID)
				assert.Nil(t, r.Flags)
				assert.Nil(t, r.Tags)
				assert.Nil(t, r.Meta)
			}
			// The base rows are untouched.
			assert.Equal(t, `{"q":"1","old":"a","drop":"x"}`, compact(b[0].Data))
		})
	}
}

func BenchmarkAssignIDs10k(b *testing.B) {
	rows := make([]Row, 10000)
	for i := range rows {
		rows[i].Data = obj(b, fmt.Sprintf(`{"question":"What is %d + %d? Please answer briefly.","answer":"%d","context":"arithmetic drill number %d","difficulty":"easy","testcase_dedup_id":"%012x"}`, i, i, 2*i, i, i))
	}
	b.ReportAllocs()
	for b.Loop() {
		AssignIDs(exampleSet, rows)
	}
}
