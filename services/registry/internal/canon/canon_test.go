package canon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func canonical(t *testing.T, in string) string {
	t.Helper()
	v, err := Parse([]byte(in))
	require.NoError(t, err, in)
	return string(AppendCanonical(nil, v))
}

func TestCanonicalTable(t *testing.T) {
	tests := []struct{ in, want string }{
		// integers: printed as Python int
		{`0`, `0`},
		{`-0`, `0`},
		{`42`, `42`},
		{`-17`, `-17`},
		{`123456789012345678901234567890`, `123456789012345678901234567890`},
		// floats: Python repr
		{`1.0`, `1.0`},
		{`100.0`, `100.0`},
		{`1e2`, `100.0`},
		{`1E2`, `100.0`},
		{`1e-05`, `1e-05`},
		{`0.00001`, `1e-05`},
		{`0.0001`, `0.0001`},
		{`1e16`, `1e+16`},
		{`1e15`, `1000000000000000.0`},
		{`9999999999999998.0`, `9999999999999998.0`},
		{`0.1`, `0.1`},
		{`0.30000000000000004`, `0.30000000000000004`},
		{`1.5e300`, `1.5e+300`},
		{`1e400`, `Infinity`},
		{`-1e400`, `-Infinity`},
		{`1e-400`, `0.0`},
		{`-1e-400`, `-0.0`},
		{`-0.0`, `-0.0`},
		{`5e-324`, `5e-324`},
		{`1e22`, `1e+22`},
		{`123456789012345678.0`, `1.2345678901234568e+17`},
		{`3.14159265358979323846`, `3.141592653589793`},
		{`-123.456e-7`, `-1.23456e-05`},
		{`1.7976931348623157e308`, `1.7976931348623157e+308`},
		// strings: ensure_ascii escapes
		{`"é"`, `"\u00e9"`},
		{`"😀"`, `"\ud83d\ude00"`},
		{`"\ud83d\ude00"`, `"\ud83d\ude00"`},
		{"\"\x7f\"", `"\u007f"`},
		{`"\u0000\u001f"`, `"\u0000\u001f"`},
		{`"\b\f\n\r\t\"\\\/"`, `"\b\f\n\r\t\"\\/"`},
		{`"<>&"`, `"<>&"`},
		{"\"\u2028\"", `"\u2028"`},
		{`"\uFFFF"`, `"\uffff"`},
		// lone surrogates become U+FFFD like encoding/json (Python would keep them)
		{`"\ud800"`, `"\ufffd"`},
		{`"\ud800\u0041"`, `"\ufffdA"`},
		// literals and containers
		{`true`, `true`},
		{`false`, `false`},
		{`null`, `null`},
		{`[]`, `[]`},
		{`{}`, `{}`},
		{` [ 1 , { } ] `, `[1,{}]`},
		// keys sorted by code point, escaped after sorting
		{`{"b":1,"a":2,"A":3,"é":4,"z":5,"😀":6,"\uffff":7,"":8}`,
			`{"":8,"A":3,"a":2,"b":1,"z":5,"\u00e9":4,"\uffff":7,"\ud83d\ude00":6}`},
		// duplicate keys: last value wins
		{`{"a":1,"a":2}`, `{"a":2}`},
		{`{"question":"2+2?","answer":"4"}`, `{"answer":"4","question":"2+2?"}`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, canonical(t, tt.in))
		})
	}
}

// TestPythonVectors checks against outputs produced by CPython itself
// (testdata/gen_vectors.py), covering random nesting, numbers and strings.
func TestPythonVectors(t *testing.T) {
	f, err := os.Open("testdata/python_vectors.jsonl")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var vec struct{ In, Out string }
		require.NoError(t, json.Unmarshal(sc.Bytes(), &vec))
		assert.Equal(t, vec.Out, canonical(t, vec.In), "input %q", vec.In)
		n++
	}
	require.NoError(t, sc.Err())
	assert.Greater(t, n, 400)
}

func TestCompact(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b": 1, "a": [1.0, 1e5, -0], "é": "😀\u2028<&>"}`, "{\"b\":1,\"a\":[1.0,1e5,-0],\"é\":\"😀\u2028<&>\"}"},
		{`{"a":1,"b":2,"a":3}`, `{"a":3,"b":2}`},
		{`"\u0001\n\u007f"`, "\"\\u0001\\n\x7f\""},
		{`{}`, `{}`},
		{`[]`, `[]`},
	}
	for _, tt := range tests {
		v, err := Parse([]byte(tt.in))
		require.NoError(t, err)
		assert.Equal(t, tt.want, string(AppendCompact(nil, v)), tt.in)
	}
}

func TestInvalidUTF8(t *testing.T) {
	v, err := Parse([]byte("\"a\xffb\""))
	require.NoError(t, err)
	assert.Equal(t, "a\uFFFDb", v)
	// Strings built in Go may hold invalid bytes; both encoders repair them.
	assert.Equal(t, `"a\ufffdb"`, string(AppendCompact(nil, "a\xffb")))
	assert.Equal(t, `"a\ufffdb"`, string(AppendCanonical(nil, "a\xffb")))
}

func TestParseErrors(t *testing.T) {
	bad := []string{
		``, ` `, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[1 2]`, `01`, `1.`, `1e`, `-`, `+1`,
		`.5`, `"abc`, "\"a\x01\"", `"\x"`, `"\u12"`, `tru`, `nul`, `{} {}`, `1 2`, `NaN`, `Infinity`,
		`{1:2}`, `'a'`,
	}
	for _, in := range bad {
		_, err := Parse([]byte(in))
		assert.Error(t, err, "%q", in)
		assert.False(t, json.Valid([]byte(in)), "%q should also be invalid for encoding/json", in)
	}
	_, err := Parse([]byte(`[1, x]`))
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	assert.EqualValues(t, 4, se.Offset)

	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	_, err = Parse([]byte(deep))
	assert.Error(t, err)
	ok := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	_, err = Parse([]byte(ok))
	assert.NoError(t, err)
}

func TestParseObject(t *testing.T) {
	o, err := ParseObject([]byte(` {"z":1,"a":{"y":2}} `))
	require.NoError(t, err)
	assert.Equal(t, 2, o.Len())
	assert.Equal(t, "z", o.Members[0].Key)
	for _, in := range []string{`[]`, `1`, `"x"`, `null`, ``, `{} x`} {
		_, err := ParseObject([]byte(in))
		assert.Error(t, err, in)
	}
}

func TestObjectOps(t *testing.T) {
	var nilObj *Object
	assert.Equal(t, 0, nilObj.Len())
	_, ok := nilObj.Get("a")
	assert.False(t, ok)

	o := NewObject(0)
	o.Set("a", "1")
	o.Set("b", json.Number("2"))
	o.Set("c", true)
	o.Set("a", "x") // in place
	assert.Equal(t, `{"a":"x","b":2,"c":true}`, string(AppendCompact(nil, o)))
	v, ok := o.Delete("b")
	assert.True(t, ok)
	assert.Equal(t, json.Number("2"), v)
	_, ok = o.Delete("b")
	assert.False(t, ok)
	assert.Equal(t, `{"a":"x","c":true}`, string(AppendCompact(nil, o)))
	assert.True(t, o.Has("c"))
	got, ok := o.Get("a")
	assert.True(t, ok)
	assert.Equal(t, "x", got)

	// Clone is deep.
	src, err := ParseObject([]byte(`{"n":{"k":[1,{"x":2}]}}`))
	require.NoError(t, err)
	c := src.Clone()
	inner, _ := c.Get("n")
	inner.(*Object).Set("k", "changed")
	assert.Equal(t, `{"n":{"k":[1,{"x":2}]}}`, string(AppendCompact(nil, src)))
}

func TestJSONInterop(t *testing.T) {
	type wrap struct {
		Data *Object `json:"data"`
		Opt  *Object `json:"opt,omitempty"`
	}
	var w wrap
	require.NoError(t, json.Unmarshal([]byte(`{"data":{"b":1.50,"a":"é"},"opt":null}`), &w))
	assert.Nil(t, w.Opt)
	out, err := json.Marshal(w)
	require.NoError(t, err)
	// encoding/json re-compacts Marshaler output but keeps order and literals.
	assert.Equal(t, `{"data":{"b":1.50,"a":"é"}}`, string(out))

	var o Object
	assert.Error(t, json.Unmarshal([]byte(`[1]`), &o))
	assert.NoError(t, o.UnmarshalJSON([]byte(` null `)))
}

func TestDecode(t *testing.T) {
	// Without UseNumber, literals still survive because Decode reads raw bytes.
	dec := json.NewDecoder(strings.NewReader(`[{"b":1.0,"a":2}, 3e0]`))
	tok, err := dec.Token()
	require.NoError(t, err)
	assert.Equal(t, json.Delim('['), tok)
	v, err := Decode(dec)
	require.NoError(t, err)
	assert.Equal(t, `{"b":1.0,"a":2}`, string(AppendCompact(nil, v)))
	v, err = Decode(dec)
	require.NoError(t, err)
	assert.Equal(t, json.Number("3e0"), v)
}

func TestForeignValues(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{map[string]any{"b": 1, "a": []string{"x"}}, `{"a":["x"],"b":1}`},
		{float64(1), `1.0`},
		{math.Inf(1), `Infinity`},
		{int64(-3), `-3`},
		{json.Number("bogus"), `null`},
		{Object{Members: []Member{{"b", nil}, {"a", nil}}}, `{"a":null,"b":null}`},
		{&Object{Members: []Member{{"a", "1"}, {"a", "2"}}}, `{"a":"2"}`},
		{(*Object)(nil), `null`},
		{[]any(nil), `null`},
		{make(chan int), `null`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, string(AppendCanonical(nil, tt.v)), "%#v", tt.v)
	}
}

func TestParseMatchesEncodingJSON(t *testing.T) {
	// The parser must decode strings exactly as encoding/json, including
	// its replacements, because rows also arrive through json.Unmarshal.
	inputs := []string{
		`"plain"`, `"\u00e9\ud83d\ude00"`, `"\udc00\ud800"`, `"\ud800\ud800\udc00"`, "\"\xc3\x28\"",
		"\"\xed\xa0\x80\"", `"\ud83d\u0041"`, `"a\/b"`,
	}
	for _, in := range inputs {
		var want string
		require.NoError(t, json.Unmarshal([]byte(in), &want))
		got, err := Parse([]byte(in))
		require.NoError(t, err)
		assert.Equal(t, want, got, in)
	}
}

func BenchmarkCanonicalRow(b *testing.B) {
	o, err := ParseObject([]byte(`{"question":"What is the capital of France?","answer":"Paris","context":"Geography quiz, level 1","difficulty":"easy","testcase_dedup_id":"048fb38354ab"}`))
	require.NoError(b, err)
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendCanonical(buf[:0], o)
	}
	_ = bytes.Clone(buf)
}
