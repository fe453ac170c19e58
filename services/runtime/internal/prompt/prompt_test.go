package prompt_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/services/runtime/internal/prompt"
)

// obj decodes a JSON literal the way the invoke surface does.
func obj(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad fixture %s: %v", s, err)
	}
	return m
}

// inputs every render test uses.
const testInputs = `{
	"country": "France",
	"n": 3,
	"pi": 3.5,
	"ok": true,
	"none": null,
	"a.b": "literal dotted key",
	"user": {"name": "Ada", "tags": ["x", "y"], "address": {"city": "Paris"}},
	"items": [{"id": 1, "name": "first"}, {"id": 2, "name": "second"}],
	"empty": [],
	"html": "<b>&</b>",
	"braces": "{{country}}"
}`

func render(t testing.TB, format, content string) (string, error) {
	t.Helper()
	tmpl := prompt.Template{
		TemplateFormat: format,
		Messages:       []prompt.Message{{Role: "user", Content: content}},
	}
	msgs, _, err := tmpl.Render(obj(t, testInputs), nil)
	if err != nil {
		return "", err
	}
	return msgs[0].Content.(string), nil
}

type renderCase struct {
	name, src, want string
	errHas          string // when set, the render fails with a 400 whose message has this
}

func runCases(t *testing.T, format string, cases []renderCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := render(t, format, c.src)
			if c.errHas != "" {
				if err == nil {
					t.Fatalf("rendered %q, want an error with %q", got, c.errHas)
				}
				if st := httpx.Status(errs.KindOf(err)); st != 400 {
					t.Fatalf("status %d, want 400: %v", st, err)
				}
				if !strings.Contains(err.Error(), c.errHas) {
					t.Fatalf("error %q does not say %q", err, c.errHas)
				}
				return
			}
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if got != c.want {
				t.Fatalf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestRenderCurly(t *testing.T) {
	runCases(t, "curly", []renderCase{
		{name: "flat", src: "Capital of {{country}}?", want: "Capital of France?"},
		{name: "spaces", src: "{{  country  }}", want: "France"},
		{name: "under inputs", src: "{{inputs.country}}", want: "France"},
		{name: "literal dotted key first", src: "{{a.b}}", want: "literal dotted key"},
		{name: "dot path", src: "{{user.address.city}}", want: "Paris"},
		{name: "array index", src: "{{user.tags[1]}} {{items[0].name}} {{items.1.name}}", want: "y first second"},
		{name: "jsonpath", src: "{{$.inputs.country}} {{$.user.tags[0]}} {{$['user']['name']}}", want: "France x Ada"},
		{name: "jsonpath negative index", src: "{{$.items[-1].id}}", want: "2"},
		{name: "jsonpath wildcard is a list", src: "{{$.items[*].name}}", want: `["first","second"]`},
		{name: "json pointer", src: "{{/user/address/city}} {{/items/1/id}}", want: "Paris 2"},
		{name: "object as compact json", src: "{{user.address}}", want: `{"city":"Paris"}`},
		{name: "array as compact json", src: "{{user.tags}}", want: `["x","y"]`},
		{name: "scalars", src: "{{n}} {{pi}} {{ok}} {{none}}", want: "3 3.5 true null"},
		{name: "no html escaping", src: "{{html}}", want: "<b>&</b>"},
		{name: "values are not re-rendered", src: "{{braces}}", want: "{{country}}"},
		{name: "no placeholder", src: "plain { text }", want: "plain { text }"},
		{name: "missing", src: "{{nope}}", errHas: `unresolved variable "nope"`},
		{name: "missing nested", src: "{{user.nope}}", errHas: `"user.nope"`},
		{name: "missing index", src: "{{user.tags[5]}}", errHas: `"user.tags[5]"`},
		{name: "missing jsonpath", src: "{{$.inputs.nope}}", errHas: `"$.inputs.nope"`},
		{name: "malformed jsonpath", src: "{{$.a[}}", errHas: "unresolved"},
		{name: "missing pointer", src: "{{/user/zip}}", errHas: `"/user/zip"`},
		{name: "error names the message", src: "{{nope}}", errHas: "parameters.prompt.messages[0].content"},
	})
}

func TestRenderMustache(t *testing.T) {
	runCases(t, "mustache", []renderCase{
		{name: "flat", src: "Capital of {{country}}?", want: "Capital of France?"},
		{name: "under inputs", src: "{{inputs.country}}", want: "France"},
		{name: "dotted", src: "{{user.address.city}}", want: "Paris"},
		{name: "no html escaping", src: "{{html}} {{{html}}} {{&html}}", want: "<b>&</b> <b>&</b> <b>&</b>"},
		{name: "section over list", src: "{{#items}}[{{id}}:{{name}}]{{/items}}", want: "[1:first][2:second]"},
		{name: "section over scalars", src: "{{#user.tags}}<{{.}}>{{/user.tags}}", want: "<x><y>"},
		{name: "inverted on empty", src: "{{^empty}}none{{/empty}}", want: "none"},
		{name: "section on missing is false", src: "{{#nope}}x{{/nope}}ok", want: "ok"},
		{name: "null renders nothing", src: "[{{none}}]", want: "[]"},
		{name: "objects as json", src: "{{user.address}} {{n}} {{pi}} {{ok}}", want: `{"city":"Paris"} 3 3.5 true`},
		{name: "jsonpath", src: "{{$.inputs.user.name}} {{ $.items[1].name }}", want: "Ada second"},
		{name: "jsonpath value not re-rendered", src: "{{$.braces}}", want: "{{country}}"},
		{name: "comment", src: "a{{! comment }}b", want: "ab"},
		{name: "missing", src: "{{nope}}", errHas: `unresolved variable "nope"`},
		{name: "missing jsonpath", src: "{{$.nope}}", errHas: `"$.nope"`},
		{name: "missing nested names the tag", src: "{{user.zip}}", errHas: `unresolved variable "user.zip"`},
		{name: "missing inside a section", src: "{{#items}}{{zip}}{{/items}}", errHas: `unresolved variable "zip"`},
		{name: "partial refused", src: "{{>secret}}", errHas: "partials are not supported"},
		{name: "empty tag refused", src: "a {{}} b", errHas: "invalid mustache template"},
		{name: "unclosed section", src: "{{#items}}x", errHas: "invalid mustache template"},
	})
}

func TestRenderFString(t *testing.T) {
	cases := []renderCase{
		{name: "flat", src: "Capital of {country}?", want: "Capital of France?"},
		{name: "escapes", src: "{{literal}} and }} {country}", want: "{literal} and } France"},
		{name: "item and attr", src: "{user[name]} {user.address.city} {items[1][name]} {user[tags][0]}", want: "Ada Paris second x"},
		{name: "inputs", src: "{inputs[country]}", want: "France"},
		{name: "conversions", src: "{country!r} {n!s}", want: `"France" 3`},
		{name: "specs", src: "[{country:>8}] [{country:*^10}] [{n:03d}] [{pi:.2f}] [{pi:.0%}] [{n:+d}] [{country:.3}]", want: "[  France] [**France**] [003] [3.50] [350%] [+3] [Fra]"},
		{name: "objects as json", src: "{user[address]}", want: `{"city":"Paris"}`},
		{name: "missing", src: "{nope}", errHas: `unresolved variable "nope"`},
		{name: "missing item", src: "{user[zip]}", errHas: `"user[zip]"`},
		{name: "positional refused", src: "{} {0}", errHas: "positional"},
		{name: "single brace", src: "a { b", errHas: "single '{'"},
		{name: "single close", src: "a } b", errHas: "single '}'"},
		{name: "huge width refused", src: "{country:>999999999}", errHas: "unsupported format spec"},
		{name: "bad spec", src: "{country:q}", errHas: "unsupported format spec"},
	}
	runCases(t, "fstring", cases)
}

func TestRenderJinja(t *testing.T) {
	runCases(t, "jinja2", []renderCase{
		{name: "flat", src: "Capital of {{ country }}?", want: "Capital of France?"},
		{name: "under inputs", src: "{{ inputs.country }} {{ inputs['country'] }}", want: "France France"},
		{name: "loop and filters", src: "{% for it in items %}{{ loop.index }}={{ it.name|upper }};{% endfor %}", want: "1=FIRST;2=SECOND;"},
		{name: "conditionals", src: "{% if ok %}yes{% else %}no{% endif %}{% if nope is defined %}!{% endif %}", want: "yes"},
		{name: "integers stay integers", src: "{{ n * 2 }} {{ n + 1 }} {{ 7 % n }} {{ pi * 2 }}", want: "6 4 1 7.0"},
		{name: "string ops", src: "{{ 'ab' * 2 }}{{ 'c' ~ country }}{{ 'x' + 'y' }}", want: "ababcFrancexy"},
		{name: "join and methods", src: "{{ user.tags|join(', ') }} {{ '-'.join(user.tags) }} {{ country.lower() }}", want: "x, y x-y france"},
		{name: "set and namespace", src: "{% set ns = namespace(c=0) %}{% for i in range(3) %}{% set ns.c = ns.c + i %}{% endfor %}{{ ns.c }}", want: "3"},
		{name: "tojson", src: "{{ user.address|tojson }}", want: `{"city":"Paris"}`},
		{name: "no html escaping", src: "{{ html }}", want: "<b>&</b>"},
		{name: "jsonpath", src: "{{$.inputs.user.name}} {{ $.items[0].id }}", want: "Ada 1"},
		{name: "jsonpath value not re-rendered", src: "{{$.braces}}", want: "{{country}}"},
		{name: "missing", src: "{{ nope }}", errHas: `unresolved variable "nope"`},
		{name: "missing attribute", src: "{{ user.zip }}", errHas: `unresolved variable "user.zip"`},
		{name: "missing jsonpath", src: "{{$.nope}}", errHas: `"$.nope"`},
		{name: "syntax error", src: "{% if %}", errHas: "invalid jinja2 template"},
		{name: "dict literal and nesting", src: "{% set d = {'a': [1, (2, 3)]} %}{{ d.a[1][0] }}{{ '{' }}", want: "2{"},
	})
}

// The jinja2 sandbox: no loader, no recursion, bounded cost.
func TestJinjaSandbox(t *testing.T) {
	runCases(t, "jinja2", []renderCase{
		{name: "include", src: "{% include '/etc/passwd' %}", errHas: "include"},
		{name: "import", src: "{% import 'x' as y %}", errHas: "import"},
		{name: "from", src: "{% from 'x' import y %}", errHas: "from"},
		{name: "extends", src: "{% extends 'base' %}", errHas: "extends"},
		{name: "macro", src: "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", errHas: "macro"},
		{name: "recursive loop", src: "{% for x in items recursive %}{{ loop(items) }}{% endfor %}", errHas: "recursive loops are not supported"},
		{name: "huge range", src: "{% for i in range(100000000) %}{% endfor %}", errHas: "range() is limited to 10000"},
		{name: "huge repetition", src: "{{ 'x' * 1000000000 }}", errHas: "repetition exceeds the output limit"},
		{name: "huge repetition in set", src: "{% set s = 'ab' * 1000000000 %}{{ s|length }}", errHas: "repetition exceeds the output limit"},
		{name: "doubling", src: "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", errHas: "concatenation exceeds the output limit"},
		{name: "list doubling", src: "{% set ns = namespace(l=[1]) %}{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}", errHas: "exceeds the size limit"},
		{name: "output cap", src: "{% for i in range(10000) %}{{ 'x' * 10000 }}{% endfor %}", errHas: "larger than"},
		{name: "modulo by zero", src: "{{ n % 0 }}", errHas: "modulo by zero"},
		{name: "padding filters are absent", src: "{{ country|center(1000000000) }}", errHas: "center"},
		{name: "padding methods are absent", src: "{{ country.ljust(1000000000) }}", errHas: "invalid jinja2 template"},
		{name: "lipsum is absent", src: "{{ lipsum(100000) }}", errHas: "invalid jinja2 template"},
		{name: "deep brackets", src: "{{ " + strings.Repeat("[", 3000) + "1" + strings.Repeat("]", 3000) + " }}", errHas: "nested too deeply"},
		{name: "deep operator chain", src: "{{ 'x'" + strings.Repeat(" ~ 'a'", 3000) + " }}", errHas: "nested too deeply"},
		{name: "replace cap", src: "{{ ('x' * 100000)|replace('x', 'y' * 1000) }}", errHas: "replace would exceed"},
	})
}

// Nested loops within the step budget stop at the deadline.
func TestJinjaDeadline(t *testing.T) {
	_, err := render(t, "jinja2", "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}")
	if err == nil || !strings.Contains(err.Error(), "ran longer than") {
		t.Fatalf("want the deadline, got %v", err)
	}
}

func TestRenderMustacheCost(t *testing.T) {
	long := make([]any, 2000)
	tmpl := prompt.Template{TemplateFormat: "mustache", Messages: []prompt.Message{{Role: "user", Content: "{{#l}}{{#l}}{{#l}}x{{/l}}{{/l}}{{/l}}"}}}
	_, _, err := tmpl.Render(map[string]any{"l": long}, nil)
	if err == nil || !strings.Contains(err.Error(), "cost too much") {
		t.Fatalf("want a refusal, got %v", err)
	}
	tmpl.Messages[0].Content = "{{#l}}{{#l}}x{{/l}}{{/l}}"
	if _, _, err := tmpl.Render(map[string]any{"l": make([]any, 100)}, nil); err != nil {
		t.Fatalf("100x100 is fine: %v", err)
	}
}

func TestRenderInputsAndHistory(t *testing.T) {
	p, err := prompt.Parse(obj(t, `{"prompt": {
		"messages": [
			{"role": "system", "content": "You answer about {{country}}."},
			{"role": "user", "content": [
				{"type": "text", "text": "Tell me about {{ $.inputs.country }}"},
				{"type": "image_url", "image_url": {"url": "https://x/{{country}}.png"}}
			]}
		],
		"input_keys": ["country"],
		"llm_config": {"model": "gpt-4o", "response_format": {"type": "json_schema", "json_schema": {
			"name": "answer", "schema": {"type": "object", "description": "facts about {{country}}",
			"properties": {"capital": {"type": "string", "pattern": "^[A-Z]{1,3}$"}}}}}}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	history := []prompt.Message{{Role: "user", Content: "hi {{country}}"}, {Role: "assistant", Content: "hello"}}
	// The {"inputs": {...}} wrapper is unwrapped.
	msgs, rf, err := p.Render(map[string]any{"inputs": map[string]any{"country": "Peru"}}, history)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 4 {
		t.Fatalf("%d messages, want 4 (2 rendered + 2 history)", len(msgs))
	}
	if msgs[0].Content != "You answer about Peru." {
		t.Fatalf("system: %q", msgs[0].Content)
	}
	parts := msgs[1].Content.([]any)
	if parts[0].(map[string]any)["text"] != "Tell me about Peru" {
		t.Fatalf("text part: %v", parts[0])
	}
	if !reflect.DeepEqual(parts[1], map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://x/{{country}}.png"}}) {
		t.Fatalf("non-text parts pass through: %v", parts[1])
	}
	if msgs[2].Content != "hi {{country}}" || msgs[3].Role != "assistant" {
		t.Fatalf("history is appended as is: %+v", msgs[2:])
	}
	schema := rf["json_schema"].(map[string]any)["schema"].(map[string]any)
	if schema["description"] != "facts about Peru" {
		t.Fatalf("response_format is templated: %v", schema["description"])
	}
	// The template itself is not modified by rendering.
	if p.Messages[0].Content != "You answer about {{country}}." {
		t.Fatalf("template mutated: %v", p.Messages[0].Content)
	}
	if p.LLMConfig.ResponseFormat["json_schema"].(map[string]any)["schema"].(map[string]any)["description"] != "facts about {{country}}" {
		t.Fatal("response_format mutated")
	}

	// input_keys: a missing key is a 400 naming it.
	_, _, err = p.Render(map[string]any{"city": "Lima"}, nil)
	if err == nil || httpx.Status(errs.KindOf(err)) != 400 || !strings.Contains(err.Error(), `missing input key "country"`) {
		t.Fatalf("want a 400 naming country, got %v", err)
	}
}

func TestRenderResponseFormatFString(t *testing.T) {
	tmpl := prompt.Template{
		TemplateFormat: "fstring",
		Messages:       []prompt.Message{{Role: "user", Content: "{country}"}},
		LLMConfig: prompt.LLMConfig{ResponseFormat: map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name": "x", "schema": map[string]any{"description": "about {country}", "pattern": `^\d{3}$`}}}},
	}
	_, rf, err := tmpl.Render(map[string]any{"country": "Chile"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := rf["json_schema"].(map[string]any)["schema"].(map[string]any)
	if s["description"] != "about Chile" || s["pattern"] != `^\d{3}$` {
		t.Fatalf("fstring response_format: %v", s)
	}
}

func TestParse(t *testing.T) {
	p, err := prompt.Parse(obj(t, `{"prompt": {
		"messages": [{"role": "system", "content": "s"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "1"}]},
			{"role": "tool", "content": "r", "tool_call_id": "1", "name": "f"}],
		"template_format": "jinja2",
		"input_keys": ["a", "b"],
		"llm_config": {"model": "gpt-4o", "connection": "team", "temperature": 0.2, "max_tokens": 100, "top_p": 0.9,
			"frequency_penalty": -1, "presence_penalty": 1.5, "reasoning_effort": "low", "chat_template_kwargs": {"x": 1},
			"response_format": {"type": "json_object"}, "stream": true,
			"tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": "auto"},
		"fallback_configs": [{"model": "claude-3-5-sonnet"}, {}],
		"fallback_policy": "availability",
		"retry_config": {"max_retries": 3, "delay": 0.5},
		"retry_policy": "transient"
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := p.LLMConfig
	if p.TemplateFormat != "jinja2" || len(p.Messages) != 3 || !reflect.DeepEqual(p.InputKeys, []string{"a", "b"}) ||
		c.Model != "gpt-4o" || c.Connection != "team" || *c.Temperature != 0.2 || *c.MaxTokens != 100 || *c.TopP != 0.9 ||
		*c.FrequencyPenalty != -1 || *c.PresencePenalty != 1.5 || c.ReasoningEffort != "low" || !*c.Stream ||
		len(c.Tools) != 1 || c.ToolChoice != "auto" || c.ResponseFormat["type"] != "json_object" || c.ChatTemplateKwargs["x"] != 1.0 {
		t.Fatalf("parsed %+v / %+v", p, c)
	}
	if len(p.FallbackConfigs) != 2 || p.FallbackConfigs[0].Model != "claude-3-5-sonnet" || p.FallbackConfigs[1].Model != prompt.DefaultModel {
		t.Fatalf("fallbacks %+v", p.FallbackConfigs)
	}
	if p.FallbackPolicy != "availability" || p.RetryConfig == nil || p.RetryConfig.MaxRetries != 3 || p.RetryConfig.Delay != 0.5 || p.RetryPolicy != "transient" {
		t.Fatalf("policies %+v %+v", p, p.RetryConfig)
	}
	if p.Messages[1].Content != nil || len(p.Messages[1].ToolCalls) != 1 || p.Messages[2].ToolCallID != "1" || p.Messages[2].Name != "f" {
		t.Fatalf("messages %+v", p.Messages)
	}

	// Defaults: curly, gpt-4o-mini, fallback off.
	d, err := prompt.Parse(obj(t, `{"prompt": {"messages": [{"role": "user", "content": "x"}], "template_format": null, "input_keys": null}}`))
	if err != nil {
		t.Fatal(err)
	}
	if d.TemplateFormat != "curly" || d.LLMConfig.Model != "gpt-4o-mini" || d.FallbackPolicy != "off" || d.RetryConfig != nil {
		t.Fatalf("defaults %+v", d)
	}
}

func TestParseLegacy(t *testing.T) {
	p, err := prompt.Parse(obj(t, `{"system_prompt": "You are a geographer.", "user_prompt": "Capital of {country}?",
		"model": "gpt-3.5-turbo", "temperature": 1, "max_tokens": 50, "top_p": 1, "frequency_penalty": 0, "presence_penalty": 0}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.TemplateFormat != "fstring" || len(p.Messages) != 2 || p.Messages[0].Role != "system" || p.Messages[1].Role != "user" ||
		p.LLMConfig.Model != "gpt-3.5-turbo" || *p.LLMConfig.MaxTokens != 50 || *p.LLMConfig.Temperature != 1 {
		t.Fatalf("legacy %+v", p)
	}
	msgs, _, err := p.Render(map[string]any{"country": "Japan"}, nil)
	if err != nil || msgs[1].Content != "Capital of Japan?" {
		t.Fatalf("legacy render %v %v", msgs, err)
	}
	old, err := prompt.Parse(obj(t, `{"prompt_system": "S", "prompt_user": "U {x}", "temperature": 0.1}`))
	if err != nil || len(old.Messages) != 2 || old.Messages[0].Content != "S" || old.Messages[1].Content != "U {x}" || old.TemplateFormat != "fstring" {
		t.Fatalf("prompt_system/prompt_user %+v %v", old, err)
	}
	// {{ }} in a legacy prompt means curly.
	c, err := prompt.Parse(obj(t, `{"user_prompt": "Capital of {{country}}?"}`))
	if err != nil || c.TemplateFormat != "curly" || len(c.Messages) != 1 || c.LLMConfig.Model != prompt.DefaultModel {
		t.Fatalf("legacy curly %+v %v", c, err)
	}
}

// Every malformed value is a 422 naming its path under parameters.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ in, path string }{
		{`{}`, "parameters.prompt"},
		{`{"prompt": "x"}`, "parameters.prompt"},
		{`{"prompt": {}}`, "parameters.prompt.messages"},
		{`{"prompt": {"messages": {}}}`, "parameters.prompt.messages"},
		{`{"prompt": {"messages": ["x"]}}`, "parameters.prompt.messages[0]"},
		{`{"prompt": {"messages": [{"role": "user", "content": "a"}, {"role": "boss", "content": "b"}]}}`, "parameters.prompt.messages[1].role"},
		{`{"prompt": {"messages": [{"content": "b"}]}}`, "parameters.prompt.messages[0].role"},
		{`{"prompt": {"messages": [{"role": "user", "content": 5}]}}`, "parameters.prompt.messages[0].content"},
		{`{"prompt": {"messages": [{"role": "user", "content": [{"text": "x"}]}]}}`, "parameters.prompt.messages[0].content[0].type"},
		{`{"prompt": {"messages": [{"role": "user", "content": [{"type": "text", "text": 1}]}]}}`, "parameters.prompt.messages[0].content[0].text"},
		{`{"prompt": {"messages": [{"role": "user", "content": "x", "tool_calls": "no"}]}}`, "parameters.prompt.messages[0].tool_calls"},
		{`{"prompt": {"messages": [{"role": "user", "content": "x", "name": 1}]}}`, "parameters.prompt.messages[0].name"},
		{`{"prompt": {"messages": [], "template_format": "handlebars"}}`, "parameters.prompt.template_format"},
		{`{"prompt": {"messages": [], "template_format": 1}}`, "parameters.prompt.template_format"},
		{`{"prompt": {"messages": [], "input_keys": "a"}}`, "parameters.prompt.input_keys"},
		{`{"prompt": {"messages": [], "input_keys": ["a", 2]}}`, "parameters.prompt.input_keys[1]"},
		{`{"prompt": {"messages": [], "llm_config": []}}`, "parameters.prompt.llm_config"},
		{`{"prompt": {"messages": [], "llm_config": {"model": 4}}}`, "parameters.prompt.llm_config.model"},
		{`{"prompt": {"messages": [], "llm_config": {"temperature": "hot"}}}`, "parameters.prompt.llm_config.temperature"},
		{`{"prompt": {"messages": [], "llm_config": {"temperature": 9}}}`, "parameters.prompt.llm_config.temperature"},
		{`{"prompt": {"messages": [], "llm_config": {"max_tokens": 1.5}}}`, "parameters.prompt.llm_config.max_tokens"},
		{`{"prompt": {"messages": [], "llm_config": {"max_tokens": 0}}}`, "parameters.prompt.llm_config.max_tokens"},
		{`{"prompt": {"messages": [], "llm_config": {"top_p": 2}}}`, "parameters.prompt.llm_config.top_p"},
		{`{"prompt": {"messages": [], "llm_config": {"presence_penalty": -3}}}`, "parameters.prompt.llm_config.presence_penalty"},
		{`{"prompt": {"messages": [], "llm_config": {"reasoning_effort": "max"}}}`, "parameters.prompt.llm_config.reasoning_effort"},
		{`{"prompt": {"messages": [], "llm_config": {"stream": "yes"}}}`, "parameters.prompt.llm_config.stream"},
		{`{"prompt": {"messages": [], "llm_config": {"response_format": {"type": "xml"}}}}`, "parameters.prompt.llm_config.response_format.type"},
		{`{"prompt": {"messages": [], "llm_config": {"response_format": {"type": "json_schema"}}}}`, "parameters.prompt.llm_config.response_format.json_schema"},
		{`{"prompt": {"messages": [], "llm_config": {"response_format": {"type": "json_schema", "json_schema": {"schema": 1}}}}}`, "parameters.prompt.llm_config.response_format.json_schema.schema"},
		{`{"prompt": {"messages": [], "llm_config": {"tools": [1]}}}`, "parameters.prompt.llm_config.tools[0]"},
		{`{"prompt": {"messages": [], "llm_config": {"tool_choice": "always"}}}`, "parameters.prompt.llm_config.tool_choice"},
		{`{"prompt": {"messages": [], "llm_config": {"chat_template_kwargs": 1}}}`, "parameters.prompt.llm_config.chat_template_kwargs"},
		{`{"prompt": {"messages": [], "fallback_configs": {}}}`, "parameters.prompt.fallback_configs"},
		{`{"prompt": {"messages": [], "fallback_configs": [{"model": "a"}, {"temperature": -1}]}}`, "parameters.prompt.fallback_configs[1].temperature"},
		{`{"prompt": {"messages": [], "fallback_policy": "sometimes"}}`, "parameters.prompt.fallback_policy"},
		{`{"prompt": {"messages": [], "fallback_policy": 1}}`, "parameters.prompt.fallback_policy"},
		{`{"prompt": {"messages": [], "retry_config": 3}}`, "parameters.prompt.retry_config"},
		{`{"prompt": {"messages": [], "retry_config": {"max_retries": -1}}}`, "parameters.prompt.retry_config.max_retries"},
		{`{"prompt": {"messages": [], "retry_config": {"max_retries": 1000}}}`, "parameters.prompt.retry_config.max_retries"},
		{`{"prompt": {"messages": [], "retry_config": {"delay": "soon"}}}`, "parameters.prompt.retry_config.delay"},
		{`{"prompt": {"messages": [], "retry_policy": []}}`, "parameters.prompt.retry_policy"},
		{`{"system_prompt": 1}`, "parameters.system_prompt"},
		{`{"prompt_user": []}`, "parameters.prompt_user"},
		{`{"user_prompt": "x", "temperature": "x"}`, "parameters.temperature"},
	} {
		t.Run(c.path, func(t *testing.T) {
			_, err := prompt.Parse(obj(t, c.in))
			if err == nil {
				t.Fatalf("%s parsed", c.in)
			}
			if st := httpx.Status(errs.KindOf(err)); st != 422 {
				t.Fatalf("status %d, want 422: %v", st, err)
			}
			e := errs.From(err)
			if !strings.HasPrefix(e.Msg, c.path+": ") {
				t.Fatalf("message %q does not start with %q", e.Msg, c.path)
			}
			fe := e.Detail.([]errs.FieldError)
			if fe[0].Loc[0] != "parameters" {
				t.Fatalf("loc %v", fe[0].Loc)
			}
		})
	}
}

func TestFallbackPolicies(t *testing.T) {
	for _, p := range []string{"off", "availability", "capacity", "access", "context", "any"} {
		tp, err := prompt.Parse(map[string]any{"prompt": map[string]any{"messages": []any{}, "fallback_policy": p}})
		if err != nil || tp.FallbackPolicy != p {
			t.Fatalf("%s: %v", p, err)
		}
	}
}

func TestDefaults(t *testing.T) {
	c := prompt.DefaultCompletion()
	msgs, _, err := c.Render(map[string]any{"country": "Italy"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Role != "system" || msgs[1].Content != `{"country":"Italy"}` || c.LLMConfig.Model != "gpt-4o-mini" {
		t.Fatalf("default completion %+v", msgs)
	}
	ch := prompt.DefaultChat()
	msgs, _, err = ch.Render(map[string]any{}, []prompt.Message{{Role: "user", Content: "hello"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Role != "system" || msgs[1].Content != "hello" {
		t.Fatalf("default chat %+v", msgs)
	}
}

func TestParseMessage(t *testing.T) {
	_, err := prompt.ParseMessage(map[string]any{"role": "robot"}, []any{"inputs", "messages", 2})
	if err == nil || !strings.HasPrefix(errs.From(err).Msg, "inputs.messages[2].role") {
		t.Fatalf("got %v", err)
	}
}

// Renders share the mustache and gonja state: run them side by side (the
// race detector checks this test).
func TestRenderConcurrent(t *testing.T) {
	srcs := map[string]string{
		"curly":    "{{country}} {{$.user.name}}",
		"mustache": "{{country}} {{#user.tags}}{{.}}{{/user.tags}}",
		"fstring":  "{country} {user[name]}",
		"jinja2": "{{ country }} {% set ns = namespace(n=0) %}{% for t in user.tags %}{{ loop.index }}{{ t|upper }}" +
			"{% set ns.n = ns.n + 1 %}{% if loop.last %}{{ ns.n * 2 }}{% endif %}{% endfor %}{% with x = n ~ '!' %}{{ x }}{% endwith %}",
	}
	done := make(chan error)
	for i := 0; i < 8; i++ {
		for f, src := range srcs {
			go func() {
				_, err := render(t, f, src)
				done <- err
			}()
		}
	}
	for i := 0; i < 8*len(srcs); i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	// The cached jinja2 template renders the same on every call.
	got, err := render(t, "jinja2", srcs["jinja2"])
	if err != nil || got != "France 1X2Y43!" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestRenderNilInputs(t *testing.T) {
	msgs, _, err := prompt.DefaultCompletion().Render(nil, nil)
	if err != nil || msgs[1].Content != "{}" {
		t.Fatalf("%v %v", msgs, err)
	}
}
