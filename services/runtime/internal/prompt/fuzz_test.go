package prompt_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/testutil/fuzzbound"
	"github.com/assayhq/assay/services/runtime/internal/prompt"
)

// checkErr: every refusal is a typed 4xx, never an internal error.
func checkErr(t *testing.T, err error) {
	t.Helper()
	if _, ok := err.(*errs.Error); !ok {
		t.Fatalf("error is %T, not *errs.Error: %v", err, err)
	}
	if st := httpx.Status(errs.KindOf(err)); st < 400 || st >= 500 {
		t.Fatalf("answered %d: %v", st, err)
	}
}

// FuzzParse: any parameters either parse into a Template that renders or
// refuses with a 4xx, or are refused with a 4xx naming the field; nothing
// panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"prompt":{"messages":[{"role":"system","content":"You are {{role}}."},{"role":"user","content":"{{q}}"}],"input_keys":["q"],"llm_config":{"model":"gpt-4o","temperature":0.3,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","description":"{{q}}"}}}}}}`,
		`{"prompt":{"messages":[{"role":"user","content":[{"type":"text","text":"{q}"},{"type":"image_url","image_url":{"url":"u"}}]}],"template_format":"fstring","fallback_configs":[{"model":"m"}],"fallback_policy":"any","retry_config":{"max_retries":2,"delay":1}}}`,
		`{"prompt":{"messages":[{"role":"user","content":"{% for i in range(3) %}{{ q }}{% endfor %}"}],"template_format":"jinja2"}}`,
		`{"prompt":{"messages":[{"role":"user","content":"{{#items}}{{.}}{{/items}}"}],"template_format":"mustache"}}`,
		`{"system_prompt":"s {q}","user_prompt":"u","temperature":0.5,"max_tokens":10}`,
		`{"prompt":{"messages":[{"role":"boss"}]}}`, `{"prompt":{"messages":{}}}`, `{"prompt":null}`, `{}`, `{"prompt":[]}`,
		`{"prompt":{"messages":[],"llm_config":{"tools":[{}],"tool_choice":{"type":"function"},"max_tokens":1e300}}}`,
		`{"prompt":{"messages":[],"retry_config":{"max_retries":1e20}}}`,
	} {
		f.Add([]byte(s))
	}
	inputs := map[string]any{"q": "question", "role": "a tester", "items": []any{"a", "b"}}
	f.Fuzz(func(t *testing.T, in []byte) {
		var params map[string]any
		if json.Unmarshal(in, &params) != nil {
			return
		}
		fuzzbound.Alloc(func() {
			tmpl, err := prompt.Parse(params)
			if err != nil {
				checkErr(t, err)
				return
			}
			if _, _, err := tmpl.Render(inputs, nil); err != nil {
				checkErr(t, err)
			}
		})
	})
}

var formats = []string{"curly", "mustache", "fstring", "jinja2"}

// FuzzRender: any template in any format, over any inputs, renders within
// MaxOutput or is refused with a 4xx; nothing panics, and a render ends
// soon after the jinja2 deadline whatever it asks for.
func FuzzRender(f *testing.F) {
	in := `{"country":"France","n":3,"user":{"name":"Ada","tags":["x","y"]},"items":[{"id":1},{"id":2}],"none":null}`
	for _, s := range []struct {
		format byte
		src    string
	}{
		{0, "Capital of {{country}}? {{user.tags[1]}} {{$.inputs.user.name}} {{/items/0/id}} {{user}}"},
		{0, "{{ $.items[*].id }} {{$..x}} {{$[}} {{a.b[}}"},
		{1, "{{#items}}[{{id}}]{{/items}}{{^none}}-{{/none}} {{{country}}} {{$.user.name}}"},
		{1, "{{=<% %>=}}<% country %>"},
		{1, "{{#items}}{{#items}}{{#items}}{{/items}}{{/items}}{{/items}}"},
		{1, "{{>p}} {{}} {{#a}}"},
		{2, "{country} {{x}} {user[name]} {user.tags[0]} {n:>10.2f} {country!r:^20}"},
		{2, "{} {0} { } {country:{n}} {n:,} {n:%}"},
		{3, "{% for i in items %}{{ loop.index }}{{ i.id * 2 }}{% endfor %}{{ country|lower }}"},
		{3, "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}"},
		{3, "{% set ns = namespace(s='x') %}{% for i in range(99) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"},
		{3, "{{ 'x' * -1 }}{{ n // 0 }}{{ n % 0 }}{% include 'x' %}"},
		{3, "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}"},
		{3, "{{ $.user.name }} {{ user.zip }}"},
	} {
		f.Add(s.format, s.src, []byte(in))
	}
	f.Fuzz(func(t *testing.T, format byte, src string, inputs []byte) {
		var vars map[string]any
		if json.Unmarshal(inputs, &vars) != nil {
			vars = map[string]any{}
		}
		tmpl := prompt.Template{
			TemplateFormat: formats[int(format)%len(formats)],
			Messages: []prompt.Message{
				{Role: "system", Content: src},
				{Role: "user", Content: []any{map[string]any{"type": "text", "text": src}}},
			},
			LLMConfig: prompt.LLMConfig{ResponseFormat: map[string]any{"type": "json_schema", "json_schema": map[string]any{"description": src}}},
		}
		start := time.Now()
		fuzzbound.Alloc(func() {
			msgs, _, err := tmpl.Render(vars, nil)
			if err != nil {
				checkErr(t, err)
				return
			}
			if s, _ := msgs[0].Content.(string); len(s) > prompt.MaxOutput {
				t.Fatalf("rendered %d bytes, over MaxOutput", len(s))
			}
		})
		// Four strings render; each jinja2 one may use its whole deadline.
		if d := time.Since(start); d > 4*prompt.JinjaTimeout+5*time.Second {
			t.Fatalf("render took %s", d)
		}
	})
}
