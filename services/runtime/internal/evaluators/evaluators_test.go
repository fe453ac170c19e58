package evaluators

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/assayhq/assay/pkg/errs"
)

// tc is one evaluator call and what the compatible platform answers to it:
// want (the outputs) or, for a refused call, the 422's loc.
type tc struct {
	name    string
	params  map[string]any
	inputs  map[string]any
	outputs any
	want    map[string]any
	errLoc  []any
}

// obj decodes a JSON literal the way the invoke surface binds request data.
func obj(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(err)
	}
	return v
}

func ca(v any) map[string]any { return map[string]any{"correct_answer": v} }

var ok, ko = map[string]any{"success": true}, map[string]any{"success": false}

func runTable(t *testing.T, key string, cases []tc) {
	t.Helper()
	for _, c := range cases {
		t.Run(key+"/"+c.name, func(t *testing.T) {
			got, err := Run(t.Context(), Env{Embedder: fixedEmbedder{}}, Request{Key: key, Parameters: c.params, Inputs: c.inputs, Outputs: c.outputs})
			if c.errLoc != nil {
				checkLoc(t, err, c.errLoc)
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

// checkLoc fails unless err is a 422 naming loc.
func checkLoc(t *testing.T, err error, loc []any) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want a 422 at %v", loc)
	}
	e := errs.From(err)
	d, _ := e.Detail.([]errs.FieldError)
	if e.Kind != errs.Unprocessable || len(d) != 1 || !reflect.DeepEqual(d[0].Loc, loc) {
		t.Fatalf("error %v (kind %v, detail %+v), want a 422 at %v", err, e.Kind, e.Detail, loc)
	}
}

func TestHasAndRun(t *testing.T) {
	for _, k := range []string{"auto_exact_match", "auto_regex_test", "field_match_test", "json_multi_field_match",
		"auto_starts_with", "auto_ends_with", "auto_contains", "auto_contains_any", "auto_contains_all",
		"auto_contains_json", "auto_json_diff", "auto_levenshtein_distance", "auto_similarity_match",
		"auto_semantic_similarity", "match", "echo", "auto_webhook_test", "auto_custom_code_run"} {
		if !Has(k) {
			t.Errorf("Has(%q) = false", k)
		}
	}
	// Run by the invoke surface (the judge with the prompt package), or none.
	for _, k := range []string{"auto_ai_critique", "completion", ""} {
		if Has(k) {
			t.Errorf("Has(%q) = true", k)
		}
		if _, err := Run(t.Context(), Env{}, Request{Key: k}); errs.KindOf(err) != errs.NotImplemented {
			t.Errorf("Run(%q) = %v, want NotImplemented", k, err)
		}
	}
}

func TestExactMatch(t *testing.T) {
	runTable(t, "auto_exact_match", []tc{
		{name: "equal strings", params: map[string]any{"correct_answer_key": "correct_answer"}, inputs: ca("Paris"), outputs: "Paris", want: ok},
		{name: "default key", inputs: ca("Paris"), outputs: "Paris", want: ok},
		{name: "case matters", inputs: ca("Paris"), outputs: "paris", want: ko},
		{name: "whitespace matters", inputs: ca("Paris"), outputs: "Paris ", want: ko},
		{name: "custom key", params: map[string]any{"correct_answer_key": "expected"}, inputs: map[string]any{"expected": "4"}, outputs: "4", want: ok},
		{name: "dicts compare as sorted dumps", inputs: ca(obj(`{"b":2,"a":1}`)), outputs: obj(`{"a":1,"b":2}`), want: ok},
		{name: "dict output against its dump", inputs: ca(`{"a": 1, "b": 2}`), outputs: obj(`{"b":2,"a":1}`), want: ok},
		{name: "compact JSON is not the dump", inputs: ca(`{"a":1}`), outputs: obj(`{"a":1}`), want: ko},
		{name: "missing correct answer", inputs: map[string]any{"other": 1}, outputs: "x", errLoc: []any{"inputs", "correct_answer"}},
		{name: "missing custom key", params: map[string]any{"correct_answer_key": "gt"}, inputs: ca("x"), outputs: "x", errLoc: []any{"inputs", "gt"}},
		{name: "key not a string", params: map[string]any{"correct_answer_key": 3.0}, inputs: ca("x"), outputs: "x", errLoc: []any{"parameters", "correct_answer_key"}},
	})
}

func TestRegexTest(t *testing.T) {
	p := func(pat string, should any) map[string]any {
		m := map[string]any{"regex_pattern": pat}
		if should != nil {
			m["regex_should_match"] = should
		}
		return m
	}
	runTable(t, "auto_regex_test", []tc{
		{name: "search not fullmatch", params: p(`\d+`, nil), outputs: "answer: 42.", want: ok},
		{name: "no match", params: p(`^\d+$`, true), outputs: "answer: 42", want: ko},
		{name: "should not match, none", params: p(`error`, false), outputs: "all good", want: ok},
		{name: "should not match, some", params: p(`error`, false), outputs: "an error", want: ko},
		{name: "anchored preset", params: p(`^PREFIX`, true), outputs: "PREFIX and more", want: ok},
		{name: "alternation preset", params: p(`(OPTION1|OPTION2|OPTION3)`, true), outputs: "pick OPTION2", want: ok},
		{name: "lookahead preset, both words", params: p(`^(?=.*\bfirst\b)(?=.*\bsecond\b).*$`, true), outputs: "the second and the first", want: ok},
		{name: "lookahead preset, one word", params: p(`^(?=.*\bfirst\b)(?=.*\bsecond\b).*$`, true), outputs: "only the first", want: ko},
		{name: "backreference", params: p(`(\w+) \1`, true), outputs: "it is is doubled", want: ok},
		{name: "case sensitive by default", params: p(`paris`, nil), outputs: "Paris", want: ko},
		{name: "case insensitive", params: map[string]any{"regex_pattern": "paris", "case_sensitive": false}, outputs: "Paris", want: ok},
		{name: "dict output is searched as its dump", params: p(`"score": 1`, nil), outputs: obj(`{"score":1}`), want: ok},
		{name: "empty pattern matches", params: p(``, nil), outputs: "x", want: ok},
		{name: "invalid regex", params: p(`(unclosed`, nil), outputs: "x", errLoc: []any{"parameters", "regex_pattern"}},
		{name: "missing pattern", params: map[string]any{}, outputs: "x", errLoc: []any{"parameters", "regex_pattern"}},
		{name: "should_match not a bool", params: p(`x`, "yes"), outputs: "x", errLoc: []any{"parameters", "regex_should_match"}},
	})
}

func TestRegexTimeout(t *testing.T) {
	// A catastrophic backtracking pattern (the lookahead forces the
	// backtracking engine) costs the time limit, not the CPU.
	pat := `^(?=a)(a+)+$`
	out := strings.Repeat("a", 64) + "!"
	start := time.Now()
	_, err := Run(t.Context(), Env{}, Request{Key: "auto_regex_test", Parameters: map[string]any{"regex_pattern": pat}, Outputs: out})
	checkLoc(t, err, []any{"parameters", "regex_pattern"})
	if !strings.Contains(err.Error(), "took longer than") {
		t.Fatalf("not a time-out: %v", err)
	}
	if d := time.Since(start); d > 20*regexTimeout {
		t.Fatalf("the match ran %v", d)
	}
}

func TestFieldMatch(t *testing.T) {
	p := map[string]any{"json_field": "answer"}
	runTable(t, "field_match_test", []tc{
		{name: "dict output", params: p, inputs: ca("Paris"), outputs: obj(`{"answer":"Paris"}`), want: ok},
		{name: "JSON string output", params: p, inputs: ca("Paris"), outputs: `{"answer": "Paris", "x": 1}`, want: ok},
		{name: "different value", params: p, inputs: ca("Paris"), outputs: `{"answer": "Lyon"}`, want: ko},
		{name: "number field against string answer", params: p, inputs: ca("42"), outputs: `{"answer": 42}`, want: ko},
		{name: "number field against number answer", params: p, inputs: ca(42.0), outputs: `{"answer": 42}`, want: ok},
		{name: "True == 1", params: p, inputs: ca(1.0), outputs: `{"answer": true}`, want: ok},
		{name: "nested value", params: p, inputs: ca(obj(`{"c":[1,2]}`)), outputs: `{"answer": {"c": [1, 2]}}`, want: ok},
		{name: "missing field", params: p, inputs: ca("Paris"), outputs: `{"city": "Paris"}`, want: ko},
		{name: "not JSON", params: p, inputs: ca("Paris"), outputs: "Paris", want: ko},
		{name: "JSON array", params: p, inputs: ca("Paris"), outputs: `["Paris"]`, want: ko},
		{name: "missing json_field", params: map[string]any{}, inputs: ca("Paris"), outputs: "{}", errLoc: []any{"parameters", "json_field"}},
		{name: "missing correct answer", params: p, inputs: map[string]any{}, outputs: "{}", errLoc: []any{"inputs", "correct_answer"}},
	})
}

func TestMultiFieldMatch(t *testing.T) {
	p := map[string]any{"fields": []any{"name", "age", "address.city"}, "correct_answer_key": "correct_answer"}
	want := ca(`{"name": "Ada", "age": 36, "address": {"city": "London"}}`)
	runTable(t, "json_multi_field_match", []tc{
		{name: "all match", params: p, inputs: want, outputs: obj(`{"name":"Ada","age":36,"address":{"city":"London"},"extra":1}`),
			want: map[string]any{"aggregate_score": 1.0, "name": 1.0, "age": 1.0, "address.city": 1.0}},
		{name: "two of three", params: p, inputs: want, outputs: `{"name": "Ada", "age": 37, "address": {"city": "London"}}`,
			want: map[string]any{"aggregate_score": 2.0 / 3, "name": 1.0, "age": 0.0, "address.city": 1.0}},
		{name: "missing in output", params: p, inputs: want, outputs: `{"name": "Ada"}`,
			want: map[string]any{"aggregate_score": 1.0 / 3, "name": 1.0, "age": 0.0, "address.city": 0.0}},
		{name: "output not JSON", params: p, inputs: want, outputs: "Ada, 36, London",
			want: map[string]any{"aggregate_score": 0.0, "name": 0.0, "age": 0.0, "address.city": 0.0}},
		{name: "dict correct answer, array index", params: map[string]any{"fields": []any{"tags.0", "tags.-1"}}, inputs: ca(obj(`{"tags":["a","b"]}`)), outputs: `{"tags": ["a", "c"]}`,
			want: map[string]any{"aggregate_score": 0.5, "tags.0": 1.0, "tags.-1": 0.0}},
		{name: "no fields", params: map[string]any{"fields": []any{}}, inputs: want, outputs: "{}", errLoc: []any{"parameters", "fields"}},
		{name: "fields missing", params: map[string]any{}, inputs: want, outputs: "{}", errLoc: []any{"parameters", "fields"}},
		{name: "field not a string", params: map[string]any{"fields": []any{"a", 2.0}}, inputs: want, outputs: "{}", errLoc: []any{"parameters", "fields", 1}},
		{name: "correct answer not JSON", params: p, inputs: ca("Ada"), outputs: "{}", errLoc: []any{"inputs", "correct_answer"}},
	})
}

func TestSubstrings(t *testing.T) {
	runTable(t, "auto_starts_with", []tc{
		{name: "prefix", params: map[string]any{"prefix": "The"}, outputs: "The answer", want: ok},
		{name: "case sensitive default", params: map[string]any{"prefix": "the"}, outputs: "The answer", want: ko},
		{name: "case insensitive", params: map[string]any{"prefix": "the", "case_sensitive": false}, outputs: "The answer", want: ok},
		{name: "dict dump starts with brace", params: map[string]any{"prefix": `{"a"`}, outputs: obj(`{"a":1}`), want: ok},
		{name: "missing prefix", params: map[string]any{}, outputs: "x", errLoc: []any{"parameters", "prefix"}},
		{name: "case_sensitive not bool", params: map[string]any{"prefix": "x", "case_sensitive": "no"}, outputs: "x", errLoc: []any{"parameters", "case_sensitive"}},
	})
	runTable(t, "auto_ends_with", []tc{
		{name: "suffix", params: map[string]any{"suffix": "."}, outputs: "Done.", want: ok},
		{name: "no suffix", params: map[string]any{"suffix": "!"}, outputs: "Done.", want: ko},
		{name: "case insensitive", params: map[string]any{"suffix": "DONE", "case_sensitive": false}, outputs: "all done", want: ok},
		{name: "missing suffix", params: map[string]any{"case_sensitive": true}, outputs: "x", errLoc: []any{"parameters", "suffix"}},
	})
	runTable(t, "auto_contains", []tc{
		{name: "substring", params: map[string]any{"substring": "Paris"}, outputs: "It is Paris.", want: ok},
		{name: "absent", params: map[string]any{"substring": "Lyon"}, outputs: "It is Paris.", want: ko},
		{name: "case insensitive", params: map[string]any{"substring": "PARIS", "case_sensitive": false}, outputs: "It is Paris.", want: ok},
		{name: "empty substring", params: map[string]any{"substring": ""}, outputs: "x", want: ok},
		{name: "substring not string", params: map[string]any{"substring": 1.0}, outputs: "x", errLoc: []any{"parameters", "substring"}},
	})
	runTable(t, "auto_contains_any", []tc{
		{name: "one of", params: map[string]any{"substrings": "Paris, Lyon"}, outputs: "Lyon is nice", want: ok},
		{name: "none of", params: map[string]any{"substrings": "Paris,Lyon"}, outputs: "Nice", want: ko},
		{name: "items trimmed", params: map[string]any{"substrings": "  Nice  ,Lyon"}, outputs: "Nice", want: ok},
		{name: "case insensitive", params: map[string]any{"substrings": "nice", "case_sensitive": false}, outputs: "NICE", want: ok},
		{name: "trailing comma matches everything", params: map[string]any{"substrings": "zzz,"}, outputs: "abc", want: ok},
		{name: "list accepted", params: map[string]any{"substrings": []any{"a", "q"}}, outputs: "q", want: ok},
		{name: "missing", params: map[string]any{}, outputs: "x", errLoc: []any{"parameters", "substrings"}},
		{name: "bad list", params: map[string]any{"substrings": []any{1.0}}, outputs: "x", errLoc: []any{"parameters", "substrings"}},
	})
	runTable(t, "auto_contains_all", []tc{
		{name: "all of", params: map[string]any{"substrings": "Paris,France"}, outputs: "Paris, France", want: ok},
		{name: "one missing", params: map[string]any{"substrings": "Paris,Germany"}, outputs: "Paris, France", want: ko},
		{name: "case insensitive", params: map[string]any{"substrings": "paris, FRANCE", "case_sensitive": false}, outputs: "Paris, France", want: ok},
		{name: "case sensitive", params: map[string]any{"substrings": "paris, FRANCE"}, outputs: "Paris, France", want: ko},
	})
}

func TestContainsJSON(t *testing.T) {
	runTable(t, "auto_contains_json", []tc{
		{name: "embedded object", outputs: `Here: {"a": 1, "b": [2]} done`, want: ok},
		{name: "first brace to last brace", outputs: `x {"a": 1} and {"b": 2}`, want: ko},
		{name: "nested", outputs: "```json\n{\"a\": {\"b\": {}}}\n```", want: ok},
		{name: "no braces", outputs: "plain text", want: ko},
		{name: "reversed braces", outputs: "} text {", want: ko},
		{name: "invalid JSON", outputs: "{a: 1}", want: ko},
		{name: "array only", outputs: "[1, 2]", want: ko},
		{name: "dict output", outputs: obj(`{"a":1}`), want: ok},
		{name: "params ignored", params: map[string]any{"x": 1.0}, outputs: "{}", want: ok},
	})
}

func TestJSONDiff(t *testing.T) {
	gt := ca(`{"name": "Ada", "age": 36, "tags": ["x", "y"], "address": {"city": "London", "zip": null}}`)
	score := func(s float64, th float64) map[string]any { return map[string]any{"score": s, "success": s >= th} }
	runTable(t, "auto_json_diff", []tc{
		{name: "identical", inputs: gt, outputs: `{"name": "Ada", "age": 36, "tags": ["x", "y"], "address": {"city": "London", "zip": null}}`, want: score(5.0/6, 0.5)}, // a null leaf never scores: 5/6
		{name: "dict output", inputs: gt, outputs: obj(`{"name":"Ada","age":36.0,"tags":["x","z"],"address":{"city":"Paris"}}`), want: score(0.5, 0.5)},
		{name: "extra output keys ignored", inputs: ca(`{"a": 1}`), outputs: `{"a": 1, "b": 2}`, want: score(1, 0.5)},
		{name: "predict_keys counts extras", params: map[string]any{"predict_keys": true}, inputs: ca(`{"a": 1}`), outputs: `{"a": 1, "b": 2}`, want: score(0.5, 0.5)},
		{name: "schema only", params: map[string]any{"compare_schema_only": true}, inputs: ca(`{"a": 1, "b": "x", "c": 1.5}`), outputs: `{"a": 2, "b": "y", "c": 2}`, want: score(2.0/3, 0.5)},
		{name: "case sensitive keys", inputs: ca(`{"Name": "Ada", "age": 1}`), outputs: `{"name": "Ada", "AGE": 1}`, want: score(0, 0.5)},
		{name: "case insensitive keys", params: map[string]any{"case_insensitive_keys": true}, inputs: ca(`{"name": "Ada", "age": 1}`), outputs: `{"name": "Ada", "AGE": 1}`, want: score(1, 0.5)},
		// Deliberately not the compatible platform's 0.5: it takes the key
		// set before lowering, so "Name" could never match there.
		{name: "case insensitive upper-case answer key", params: map[string]any{"case_insensitive_keys": true}, inputs: ca(`{"Name": "Ada", "age": 1}`), outputs: `{"name": "Ada", "AGE": 1}`, want: score(1, 0.5)},
		{name: "True == 1", inputs: ca(`{"a": true}`), outputs: `{"a": 1}`, want: score(1, 0.5)},
		{name: "threshold", params: map[string]any{"threshold": 0.9}, inputs: ca(`{"a": 1, "b": 2}`), outputs: `{"a": 1}`, want: score(0.5, 0.9)},
		{name: "lists by index", inputs: ca(`[1, 2, 3]`), outputs: `[1, 2, 4]`, want: score(2.0/3, 0.5)},
		{name: "scalar answer has no keys", inputs: ca(`42`), outputs: `42`, want: score(0, 0.5)},
		{name: "output not JSON", inputs: gt, outputs: "Ada", errLoc: []any{"outputs"}},
		{name: "answer not JSON", inputs: ca("Ada"), outputs: "{}", errLoc: []any{"inputs", "correct_answer"}},
		{name: "threshold out of range", params: map[string]any{"threshold": 1.5}, inputs: gt, outputs: "{}", errLoc: []any{"parameters", "threshold"}},
		{name: "flag not bool", params: map[string]any{"predict_keys": "yes"}, inputs: gt, outputs: "{}", errLoc: []any{"parameters", "predict_keys"}},
	})
}

func TestLevenshtein(t *testing.T) {
	d := func(n float64) map[string]any { return map[string]any{"score": n} }
	ds := func(n float64, s bool) map[string]any { return map[string]any{"score": n, "success": s} }
	runTable(t, "auto_levenshtein_distance", []tc{
		{name: "kitten sitting", inputs: ca("sitting"), outputs: "kitten", want: d(3)},
		{name: "equal", inputs: ca("Paris"), outputs: "Paris", want: d(0)},
		{name: "empty output", inputs: ca("Paris"), outputs: "", want: d(5)},
		{name: "code points not bytes", inputs: ca("café"), outputs: "cafe", want: d(1)},
		{name: "astral", inputs: ca("😀"), outputs: "😃", want: d(1)},
		{name: "within threshold", params: map[string]any{"threshold": 3.0}, inputs: ca("sitting"), outputs: "kitten", want: ds(3, true)},
		{name: "over threshold", params: map[string]any{"threshold": 2.0}, inputs: ca("sitting"), outputs: "kitten", want: ds(3, false)},
		{name: "case sensitive", inputs: ca("PARIS"), outputs: "paris", want: d(5)},
		{name: "case insensitive", params: map[string]any{"case_sensitive": false}, inputs: ca("PARIS"), outputs: "paris", want: d(0)},
		{name: "dict output dumped", inputs: ca(`{"a": 1}`), outputs: obj(`{"a":1}`), want: d(0)},
		{name: "negative threshold", params: map[string]any{"threshold": -1.0}, inputs: ca("a"), outputs: "a", errLoc: []any{"parameters", "threshold"}},
		{name: "threshold not a number", params: map[string]any{"threshold": "3"}, inputs: ca("a"), outputs: "a", errLoc: []any{"parameters", "threshold"}},
		{name: "missing answer", inputs: map[string]any{}, outputs: "a", errLoc: []any{"inputs", "correct_answer"}},
	})
}

func TestSimilarityMatch(t *testing.T) {
	// Ratios from python3: difflib.SequenceMatcher(None, output, answer).ratio().
	s := func(r, th float64) map[string]any { return map[string]any{"score": r, "success": r >= th} }
	th := func(v float64) map[string]any { return map[string]any{"similarity_threshold": v} }
	runTable(t, "auto_similarity_match", []tc{
		{name: "hello there", params: th(0.5), inputs: ca("hello there world"), outputs: "hello world", want: s(0.7857142857142857, 0.5)},
		{name: "sentence vs word", params: th(0.5), inputs: ca("Paris"), outputs: "The capital of France is Paris.", want: s(0.2777777777777778, 0.5)},
		{name: "case sensitive", params: th(0.9), inputs: ca("paris"), outputs: "Paris", want: s(0.8, 0.9)},
		{name: "case insensitive", params: map[string]any{"similarity_threshold": 0.9, "case_sensitive": false}, inputs: ca("paris"), outputs: "Paris", want: s(1, 0.9)},
		{name: "dict output dumped", params: th(0.5), inputs: ca("Paris"), outputs: obj(`{"answer":"Paris"}`), want: s(0.4166666666666667, 0.5)},
		{name: "default threshold", inputs: ca("Paris"), outputs: "Paris", want: s(1, 0.5)},
		{name: "both empty", params: th(1), inputs: ca(""), outputs: "", want: s(1, 1)},
		{name: "threshold over 1", params: th(1.5), inputs: ca("a"), outputs: "a", errLoc: []any{"parameters", "similarity_threshold"}},
		{name: "threshold not a number", params: map[string]any{"similarity_threshold": true}, inputs: ca("a"), outputs: "a", errLoc: []any{"parameters", "similarity_threshold"}},
	})
}

// pythonExpected is testdata/python_expected.json, written by CPython
// (testdata/python_expected.py).
type pythonExpected struct {
	Difflib []struct {
		A, B            string
		Ratio           float64 `json:"ratio"`
		RatioNoAutojunk float64 `json:"ratio_no_autojunk"`
	} `json:"difflib"`
	Dumps []struct {
		JSON  string `json:"json"`
		Dumps string `json:"dumps"`
	} `json:"dumps"`
}

func loadPython(t testing.TB) pythonExpected {
	raw, err := os.ReadFile("testdata/python_expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var p pythonExpected
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRatioMatchesPython checks the ratio against CPython's on pairs up to
// 700 characters, 50 of which Python scores differently without autojunk:
// those prove the popular-character rule for texts of 200 and more is the
// same.
func TestRatioMatchesPython(t *testing.T) {
	p := loadPython(t)
	dependent := 0
	for i, c := range p.Difflib {
		got := ratio([]rune(c.A), []rune(c.B))
		if got != c.Ratio {
			t.Errorf("pair %d (%d, %d chars): ratio %v, python %v (without autojunk %v)", i, len([]rune(c.A)), len([]rune(c.B)), got, c.Ratio, c.RatioNoAutojunk)
		}
		if c.Ratio != c.RatioNoAutojunk {
			dependent++
		}
	}
	if dependent == 0 {
		t.Fatal("no pair depends on autojunk: regenerate testdata")
	}
}

func TestDumpsMatchesPython(t *testing.T) {
	for _, c := range loadPython(t).Dumps {
		if got := pyDumps(obj(c.JSON)); got != c.Dumps {
			t.Errorf("dumps(%s) = %s, python %s", c.JSON, got, c.Dumps)
		}
	}
}

// fixedEmbedder is the embeddings test double: fixed vectors by text.
type fixedEmbedder struct {
	calls *[]string
}

var vectors = map[string][]float64{
	"Paris":                {1, 0, 0},
	"The capital is Paris": {0.8, 0.6, 0},
	"Lyon":                 {0, 1, 0},
	"nothing":              {0, 0, 0},
	"opposite":             {-1, 0, 0},
}

func (f fixedEmbedder) Embed(_ context.Context, model, conn string, in []string) ([][]float64, error) {
	if f.calls != nil {
		*f.calls = append(*f.calls, model+"|"+conn)
	}
	if model == "refuse" {
		return nil, errs.New(errs.FailedDependency, "llm.provider_refused", "invalid api key")
	}
	out := make([][]float64, len(in))
	for i, s := range in {
		v, ok := vectors[s]
		if !ok {
			return nil, fmt.Errorf("no vector for %q", s)
		}
		out[i] = v
	}
	if model == "short" {
		return out[:1], nil
	}
	return out, nil
}

func TestSemanticSimilarity(t *testing.T) {
	s := func(r, th float64) map[string]any { return map[string]any{"score": r, "success": r >= th} }
	runTable(t, "auto_semantic_similarity", []tc{
		{name: "same", inputs: ca("Paris"), outputs: "Paris", want: s(1, 0.5)},
		{name: "close", params: map[string]any{"correct_answer_key": "correct_answer"}, inputs: ca("Paris"), outputs: "The capital is Paris", want: s(0.8, 0.5)},
		{name: "orthogonal", inputs: ca("Paris"), outputs: "Lyon", want: s(0, 0.5)},
		{name: "opposite", inputs: ca("Paris"), outputs: "opposite", want: s(-1, 0.5)},
		{name: "zero vector", inputs: ca("Paris"), outputs: "nothing", want: s(0, 0.5)},
		{name: "threshold", params: map[string]any{"threshold": 0.9}, inputs: ca("Paris"), outputs: "The capital is Paris", want: s(0.8, 0.9)},
		{name: "missing answer", inputs: map[string]any{}, outputs: "Paris", errLoc: []any{"inputs", "correct_answer"}},
		{name: "model not a string", params: map[string]any{"embedding_model": 1.0}, inputs: ca("Paris"), outputs: "Paris", errLoc: []any{"parameters", "embedding_model"}},
	})

	var calls []string
	env := Env{Embedder: fixedEmbedder{calls: &calls}}
	run := func(p map[string]any) (map[string]any, error) {
		return Run(t.Context(), env, Request{Key: "auto_semantic_similarity", Parameters: p, Inputs: ca("Paris"), Outputs: "Paris"})
	}
	for _, p := range []map[string]any{{}, {"embedding_model": "text-embedding-3-large", "connection": "team-key"}, {"model": "m2"}} {
		if _, err := run(p); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"text-embedding-3-small|", "text-embedding-3-large|team-key", "m2|"}; !reflect.DeepEqual(calls, want) {
		t.Fatalf("embed calls %v, want %v", calls, want)
	}
	// A provider's refusal comes back unchanged for the caller to map.
	if _, err := run(map[string]any{"model": "refuse"}); errs.KindOf(err) != errs.FailedDependency || errs.From(err).Code != "llm.provider_refused" {
		t.Fatalf("refusal: %v", err)
	}
	if _, err := run(map[string]any{"model": "short"}); errs.KindOf(err) != errs.FailedDependency {
		t.Fatalf("short answer: %v", err)
	}
	if _, err := Run(t.Context(), Env{}, Request{Key: "auto_semantic_similarity", Inputs: ca("Paris"), Outputs: "Paris"}); errs.KindOf(err) != errs.Unavailable {
		t.Fatalf("no embedder: %v", err)
	}
}

func TestEcho(t *testing.T) {
	runTable(t, "echo", []tc{
		{name: "aloha", inputs: map[string]any{"aloha": "hi"}, outputs: "ignored", want: map[string]any{"got": "hi"}},
		{name: "outputs", inputs: map[string]any{"q": 1.0}, outputs: obj(`{"a":1}`), want: map[string]any{"got": `{"a": 1}`}},
		{name: "inputs", inputs: map[string]any{"q": 1.0}, want: map[string]any{"got": `{"q": 1}`}},
		{name: "nothing", want: map[string]any{"got": `{}`}},
	})
}

func TestPairCost(t *testing.T) {
	long := make([]byte, 1<<14)
	for i := range long {
		long[i] = 'a' + byte(i%26)
	}
	in := ca(string(long[:1<<13]))
	for _, key := range []string{"auto_levenshtein_distance", "auto_similarity_match"} {
		_, err := Run(t.Context(), Env{}, Request{Key: key, Inputs: in, Outputs: string(long)})
		checkLoc(t, err, []any{"outputs"})
		_, err = Run(t.Context(), Env{}, Request{Key: key, Inputs: ca(string(long)), Outputs: string(long[:1<<13])})
		checkLoc(t, err, []any{"inputs", "correct_answer"})
	}
}

func TestErrorsAreFieldErrors(t *testing.T) {
	// Every refusal is an *errs.Error, so the invoke surface renders it.
	_, err := Run(t.Context(), Env{}, Request{Key: "auto_exact_match"})
	var e *errs.Error
	if !errors.As(err, &e) {
		t.Fatalf("%T", err)
	}
}

// TestNumberForms: data decoded with UseNumber, or left as raw JSON, scores
// as Python does, telling 1 from 1.0 where Python does.
func TestNumberForms(t *testing.T) {
	num := func(s string) any {
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	run := func(key string, p map[string]any, in map[string]any, out any) map[string]any {
		t.Helper()
		got, err := Run(t.Context(), Env{}, Request{Key: key, Parameters: p, Inputs: in, Outputs: out})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	// type(1) is int, type(1.5) and type(2.0) float: schema-only diff.
	got := run("auto_json_diff", map[string]any{"compare_schema_only": true}, ca(`{"a": 1, "b": 1.5}`), num(`{"a": 2, "b": 2.0}`))
	if got["score"] != 1.0 {
		t.Fatalf("schema diff %v", got)
	}
	got = run("auto_json_diff", map[string]any{"compare_schema_only": true}, ca(`{"a": 1.0}`), num(`{"a": 2}`))
	if got["score"] != 0.0 {
		t.Fatalf("schema diff int/float %v", got)
	}
	// json.dumps({"a": 1.0, "b": 10, "c": 1e16}) == '{"a": 1.0, "b": 10, "c": 1e+16}'
	got = run("auto_exact_match", nil, ca(`{"a": 1.0, "b": 10, "c": 1e+16}`), num(`{"c": 1e16, "b": 10, "a": 1.0}`))
	if got["success"] != true {
		t.Fatalf("dumps of json.Number: %v", got)
	}
	got = run("field_match_test", map[string]any{"json_field": "n"}, ca(num(`2`)), json.RawMessage(`{"n": 2.0}`))
	if got["success"] != true {
		t.Fatalf("raw outputs: %v", got)
	}
	got = run("auto_contains", map[string]any{"substring": "not json"}, nil, json.RawMessage(`not json`))
	if got["success"] != true {
		t.Fatalf("raw non-JSON outputs: %v", got)
	}
}
