package prompt_test

import (
	"strings"
	"testing"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/services/runtime/internal/prompt"
)

func TestParseJudgeCatalogPreset(t *testing.T) {
	// The catalog's Conciseness preset, with prompts of our own.
	j, err := prompt.ParseJudge(obj(t, `{
		"prompt_template": [
			{"role": "system", "content": "Judge conciseness."},
			{"role": "user", "content": "Q: {{question}}\nA: {{outputs}}\nExpected: {{correct_answer}}\nAlso: {{ground_truth}} {{prediction}} {{inputs.question}} {{trace.id}}"}
		],
		"model": "gpt-4o-mini", "response_type": "json_schema",
		"json_schema": {"name": "schema", "schema": {"type": "object", "properties": {"score": {"type": "number"}}}, "strict": true},
		"version": "5", "template_format": "mustache", "threshold": 0.7
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if j.Template.TemplateFormat != "mustache" || j.Template.LLMConfig.Model != "gpt-4o-mini" || j.Threshold != 0.7 || j.CorrectAnswerKey != "correct_answer" {
		t.Fatalf("judge %+v", j)
	}
	rf := j.Template.LLMConfig.ResponseFormat
	if rf["type"] != "json_schema" || rf["json_schema"].(map[string]any)["name"] != "schema" {
		t.Fatalf("response_format %v", rf)
	}
	msgs, _, err := j.Render(map[string]any{"question": "2+2?", "correct_answer": "4"}, "four", map[string]any{"id": "t1"})
	if err != nil {
		t.Fatal(err)
	}
	want := "Q: 2+2?\nA: four\nExpected: 4\nAlso: 4 four 2+2? t1"
	if msgs[1].Content != want {
		t.Fatalf("got %q\nwant %q", msgs[1].Content, want)
	}
	// Without a correct answer, a prompt that uses it names it.
	_, _, err = j.Render(map[string]any{"question": "2+2?"}, "four", map[string]any{"id": "t1"})
	if err == nil || !strings.Contains(err.Error(), `"correct_answer"`) || !strings.Contains(err.Error(), "parameters.prompt_template[1].content") {
		t.Fatalf("want an unresolved correct_answer in prompt_template[1], got %v", err)
	}
}

func TestParseJudgeDefaults(t *testing.T) {
	j, err := prompt.ParseJudge(map[string]any{"correct_answer_key": "expected"})
	if err != nil {
		t.Fatal(err)
	}
	if j.Template.LLMConfig.Model != "gpt-4o" || j.Threshold != 0.5 || j.Template.TemplateFormat != "curly" || len(j.Template.Messages) != 2 || j.CorrectAnswerKey != "expected" {
		t.Fatalf("defaults %+v", j)
	}
	msgs, rf, err := j.Render(map[string]any{"q": "x", "expected": "y"}, map[string]any{"a": 1.0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msgs[1].Content.(string), `{"a":1}`) || rf["type"] != "json_schema" {
		t.Fatalf("default judge render %v %v", msgs, rf)
	}
	vars := j.Variables(map[string]any{"expected": "y"}, "out", nil)
	if vars["ground_truth"] != "y" || vars["correct_answer"] != "y" || vars["prediction"] != "out" {
		t.Fatalf("vars %v", vars)
	}
	if _, ok := vars["trace"]; ok {
		t.Fatal("trace is undefined when not given")
	}

	// Versions 1 and 2 wrote {name} prompts.
	old, err := prompt.ParseJudge(obj(t, `{"prompt_template": [{"role": "user", "content": "{outputs} vs {correct_answer}"}], "version": "2", "response_type": "text"}`))
	if err != nil || old.Template.TemplateFormat != "fstring" || old.Template.LLMConfig.ResponseFormat != nil {
		t.Fatalf("v2 %+v %v", old, err)
	}
	jo, err := prompt.ParseJudge(map[string]any{"response_type": "json_object", "connection": nil, "threshold": 1})
	if err != nil || jo.Template.LLMConfig.ResponseFormat["type"] != "json_object" || jo.Threshold != 1 {
		t.Fatalf("json_object %+v %v", jo, err)
	}
}

func TestParseJudgeErrors(t *testing.T) {
	for _, c := range []struct{ in, path string }{
		{`{"prompt_template": "x"}`, "parameters.prompt_template"},
		{`{"prompt_template": []}`, "parameters.prompt_template"},
		{`{"prompt_template": [{"role": "judge", "content": "x"}]}`, "parameters.prompt_template[0].role"},
		{`{"model": 4}`, "parameters.model"},
		{`{"connection": 4}`, "parameters.connection"},
		{`{"response_type": "yaml"}`, "parameters.response_type"},
		{`{"json_schema": "x"}`, "parameters.json_schema"},
		{`{"json_schema": {"schema": []}}`, "parameters.json_schema.schema"},
		{`{"json_schema": {"name": 1}}`, "parameters.json_schema.name"},
		{`{"threshold": "high"}`, "parameters.threshold"},
		{`{"template_format": "erb"}`, "parameters.template_format"},
		{`{"correct_answer_key": 1}`, "parameters.correct_answer_key"},
	} {
		_, err := prompt.ParseJudge(obj(t, c.in))
		if err == nil {
			t.Fatalf("%s parsed", c.in)
		}
		if st := httpx.Status(errs.KindOf(err)); st != 422 || !strings.HasPrefix(errs.From(err).Msg, c.path+": ") {
			t.Fatalf("%s: %d %v, want 422 at %s", c.in, st, err, c.path)
		}
	}
}

func TestJudgeOutputs(t *testing.T) {
	j := prompt.Judge{Threshold: 0.5}
	for _, c := range []struct {
		content string
		want    map[string]any
	}{
		{`{"score": 0.8, "comment": "good"}`, map[string]any{"score": 0.8, "comment": "good", "success": true}},
		{`{"score": 0.2}`, map[string]any{"score": 0.2, "success": false}},
		{`{"score": 0.5}`, map[string]any{"score": 0.5, "success": true}},
		{`{"score": 0.1, "success": true}`, map[string]any{"score": 0.1, "success": true}},
		{`{"score": true}`, map[string]any{"score": true, "success": true}},
		{`{"verdict": "ok"}`, map[string]any{"verdict": "ok"}},
		{"```json\n{\"score\": 1}\n```", map[string]any{"score": 1.0, "success": true}},
		{` 0.7 `, map[string]any{"score": 0.7, "success": true}},
		{`0`, map[string]any{"score": 0.0, "success": false}},
		{`"0.9"`, map[string]any{"score": 0.9, "success": true}},
		{`true`, map[string]any{"success": true}},
		{`false`, map[string]any{"success": false}},
	} {
		got, err := j.Outputs(c.content)
		if err != nil {
			t.Fatalf("%q: %v", c.content, err)
		}
		if len(got) != len(c.want) {
			t.Fatalf("%q: got %v want %v", c.content, got, c.want)
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Fatalf("%q: got %v want %v", c.content, got, c.want)
			}
		}
	}
	for _, bad := range []string{"", "The answer is good.", "[1,2]", `"yes"`, "null", "{} {}", strings.Repeat("x", 5000)} {
		_, err := j.Outputs(bad)
		if err == nil {
			t.Fatalf("%q accepted", bad)
		}
		e := errs.From(err)
		if httpx.Status(e.Kind) != 422 || len(e.Msg) > 400 {
			t.Fatalf("%q: %d %q", bad, httpx.Status(e.Kind), e.Msg)
		}
	}
}
