package inputlimits_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/inputlimits"
)

// fieldOf returns the loc and msg of a 422 from the text checks.
func fieldOf(t *testing.T, err error) ([]any, string) {
	t.Helper()
	require.Error(t, err)
	e := errs.From(err)
	require.Equal(t, errs.Unprocessable, e.Kind)
	fe := e.Detail.([]errs.FieldError)
	return fe[0].Loc, fe[0].Msg
}

func TestCheckJSONText(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		loc       []any // nil: no problem
		msg       string
	}{
		{"clean", `{"a":"b","c":[1,"x",{"d":null}],"e":"\u00e9\ud83d\ude00"}`, nil, ""},
		{"escaped backslash before u0000 is no NUL", `{"a":"\\u0000"}`, nil, ""},
		{"NUL in a value", `{"testset":{"name":"a\u0000b"}}`, []any{"body", "testset", "name"}, "NUL"},
		{"NUL in a key", `{"meta":{"k\u0000":1}}`, []any{"body", "meta", "k\x00"}, "NUL"},
		{"NUL in a list", `{"tags":["a","b","\u0000"]}`, []any{"body", "tags", 2}, "NUL"},
		{"NUL deep in lists and objects", `{"a":[{"b":[0,[1,{"c":"\u0000"}]]}]}`, []any{"body", "a", 0, "b", 1, 1, "c"}, "NUL"},
		{"lone high surrogate", `{"x":"\ud800"}`, []any{"body", "x"}, "surrogate"},
		{"lone low surrogate", `{"x":"a\udc00"}`, []any{"body", "x"}, "surrogate"},
		{"high surrogate then a non-surrogate escape", `{"x":"\ud83d\u0041"}`, []any{"body", "x"}, "surrogate"},
		{"invalid UTF-8", "{\"x\":\"a\xffb\"}", []any{"body", "x"}, "UTF-8"},
		{"a top-level string", `"\u0000"`, []any{"body"}, "NUL"},
		{"a value after an empty object in a list", `[{},"\u0000"]`, []any{"body", 1}, "NUL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := inputlimits.CheckJSONText([]byte(tc.doc), nil, "body")
			if tc.loc == nil {
				assert.NoError(t, err)
				return
			}
			loc, msg := fieldOf(t, err)
			assert.Equal(t, tc.loc, loc)
			assert.Contains(t, msg, tc.msg)
		})
	}
}

func TestCheckJSONTextSkip(t *testing.T) {
	// Testcase data is stored as json, which keeps \u0000: exempt
	// testcases[i].data, but not the row's meta next to it.
	skip := func(p []any) bool {
		n := len(p)
		_, isIdx := p[max(n-2, 0)].(int)
		return n >= 3 && p[n-1] == "data" && isIdx && p[n-3] == "testcases"
	}
	ok := `{"data":{"testcases":[{"data":{"q":"\u0000","n":{"\u0000":"\ud800"}}},{"data":"\u0000"}]},"name":"fine"}`
	assert.NoError(t, inputlimits.CheckJSONText([]byte(ok), skip, "body"))
	bad := `{"data":{"testcases":[{"data":{"q":"\u0000"},"meta":{"m":"\u0000"}}]}}`
	loc, _ := fieldOf(t, inputlimits.CheckJSONText([]byte(bad), skip, "body"))
	assert.Equal(t, []any{"body", "data", "testcases", 0, "meta", "m"}, loc)
	key := `{"data":{"testcases":[{"data":{"q":"\u0000"},"\u0000":1}]}}`
	loc, _ = fieldOf(t, inputlimits.CheckJSONText([]byte(key), skip, "body"))
	assert.Equal(t, []any{"body", "data", "testcases", 0, "\x00"}, loc, "a key next to the exempt value is checked")
	after := `{"data":{"testcases":[{"data":{"q":"\u0000"}}]},"name":"\u0000"}`
	loc, _ = fieldOf(t, inputlimits.CheckJSONText([]byte(after), skip, "body"))
	assert.Equal(t, []any{"body", "name"}, loc, "the exemption ends with the exempt value")
}

func TestCheckText(t *testing.T) {
	assert.NoError(t, inputlimits.CheckText("plain é", "query", "name"))
	loc, msg := fieldOf(t, inputlimits.CheckText("a\x00", "query", "name"))
	assert.Equal(t, []any{"query", "name"}, loc)
	assert.Contains(t, msg, "NUL")
	_, msg = fieldOf(t, inputlimits.CheckText("a\xff", "body", "testset_name"))
	assert.Contains(t, msg, "UTF-8")
}

// TestCheckJSONTextIsLinear checks the cost of the walk: a clean body
// allocates nothing, and a suspicious one (which is walked) allocates in
// proportion to its size, whatever its nesting depth.
func TestCheckJSONTextIsLinear(t *testing.T) {
	clean := []byte(`{"rows":[` + strings.Repeat(`{"a":"b","c":[1,2,3]},`, 10000) + `{}]}`)
	assert.Zero(t, testing.AllocsPerRun(10, func() { _ = inputlimits.CheckJSONText(clean, nil, "body") }))

	wide := func(n int) []byte {
		return []byte(`{"rows":[` + strings.Repeat(`{"a":"b"},`, n) + `{"a":"\u0000"}]}`)
	}
	deep := func(n int) []byte {
		return []byte(strings.Repeat(`{"a":[`, n) + `"\u0000"` + strings.Repeat(`]}`, n))
	}
	for name, doc := range map[string]func(int) []byte{"wide": wide, "deep": deep} {
		small := testing.AllocsPerRun(3, func() { _ = inputlimits.CheckJSONText(doc(10000), nil, "body") })
		large := testing.AllocsPerRun(3, func() { _ = inputlimits.CheckJSONText(doc(100000), nil, "body") })
		assert.LessOrEqual(t, large, 11*small+100, "%s: %v allocations for 10x the size, %v for 1x", name, large, small)
		err := inputlimits.CheckJSONText(doc(10000), nil, "body")
		loc, _ := fieldOf(t, err)
		if name == "deep" {
			assert.Len(t, loc, 1+2*10000, "the path names every level")
		}
	}
}

func BenchmarkCheckJSONText(b *testing.B) {
	clean := []byte(`{"rows":[` + strings.Repeat(`{"a":"b","c":[1,2,3]},`, 10000) + `{}]}`)
	suspicious := []byte(`{"rows":[` + strings.Repeat(`{"a":"b","c":[1,2,3]},`, 10000) + `{"a":"\\u0000"}]}`)
	for name, doc := range map[string][]byte{"clean": clean, "walked": suspicious} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				_ = inputlimits.CheckJSONText(doc, nil, "body")
			}
		})
	}
}

// FuzzCheckJSONText: never a panic (JSON or not), and a report only where the document
// really holds one of the faults it names.
func FuzzCheckJSONText(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":"\u0000"}`, `["\ud800"]`, "{\"a\":\"\xff\"}", `{"a":[1,{"b":"\\u0000"}]}`, `"x"`, `[[[[]]]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		err := inputlimits.CheckJSONText(doc, nil, "body")
		if !json.Valid(doc) {
			return // the check gives up on what is not JSON, but must not panic
		}
		if err == nil {
			return
		}
		_, msg := fieldOf(t, err)
		switch {
		case strings.Contains(msg, "NUL"):
			assert.Contains(t, string(doc), `\u0000`)
		case strings.Contains(msg, "UTF-8"):
			assert.False(t, utf8.Valid(doc))
		case strings.Contains(msg, "surrogate"):
			assert.True(t, bytes.Contains(bytes.ToLower(doc), []byte(`\ud`)))
		}
	})
}

func TestCheckJSONLimits(t *testing.T) {
	deep := func(n int) string { return strings.Repeat(`{"a":`, n-1) + "[1]" + strings.Repeat("}", n-1) }
	long := "1" + strings.Repeat("0", inputlimits.MaxJSONNumberLength-1)
	for _, ok := range []string{
		`{}`, `{"n":` + long + `}`, `{"n":-` + long[1:] + `}`, deep(inputlimits.MaxJSONDepth),
		// what looks like a number or nesting inside a string does not count
		`{"s":"` + strings.Repeat("9", 5000) + `","t":"` + strings.Repeat("[", 5000) + `\"[["}`,
		`[true,false,null,1e10,-0.5E-3]`,
	} {
		require.NoError(t, inputlimits.CheckJSONLimits([]byte(ok), "body"), ok[:min(len(ok), 60)])
	}
	for _, tc := range []struct {
		raw string
		loc []any
	}{
		{`{"n":` + long + `0}`, []any{"body", "n"}},
		{`{"x":[1,{"y":-` + long + `}]}`, []any{"body", "x", 1, "y"}},
		{`{"x":` + deep(inputlimits.MaxJSONDepth) + `}`, append([]any{"body", "x"}, func() []any {
			var p []any
			for range 15 { // the location is cut to 16 steps after loc
				p = append(p, "a")
			}
			return p
		}()...)},
	} {
		err := inputlimits.CheckJSONLimits([]byte(tc.raw), "body")
		require.Error(t, err)
		e := errs.From(err)
		require.Equal(t, errs.Unprocessable, e.Kind, err.Error())
		detail, _ := json.Marshal(e.Detail)
		var d []struct {
			Loc []any `json:"loc"`
		}
		require.NoError(t, json.Unmarshal(detail, &d))
		want, _ := json.Marshal(tc.loc)
		got, _ := json.Marshal(d[0].Loc)
		require.JSONEq(t, string(want), string(got))
	}
}
