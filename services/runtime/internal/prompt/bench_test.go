package prompt_test

import (
	"testing"

	"github.com/assayhq/assay/services/runtime/internal/prompt"
)

func benchRender(b *testing.B, format string, system, user string) {
	tmpl := prompt.Template{
		TemplateFormat: format,
		Messages: []prompt.Message{
			{Role: "system", Content: system},
			{Role: "user", Content: user},
			{Role: "assistant", Content: "Noted."},
		},
		InputKeys: []string{"country", "question"},
	}
	inputs := map[string]any{
		"country":  "France",
		"question": "What is the capital, and what river crosses it?",
		"context":  map[string]any{"population": 68.0, "languages": []any{"French"}},
	}
	if _, _, err := tmpl.Render(inputs, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := tmpl.Render(inputs, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// A typical 3-message curly prompt: a system message with two variables,
// a user message with a variable and a JSONPath, an assistant message.
func BenchmarkRenderCurly(b *testing.B) {
	benchRender(b, "curly",
		"You are an expert on {{country}}. Context: {{context}}.",
		"{{question}} (about {{$.inputs.country}})")
}

func BenchmarkRenderMustache(b *testing.B) {
	benchRender(b, "mustache",
		"You are an expert on {{country}}. Speaks {{#context.languages}}{{.}} {{/context.languages}}.",
		"{{question}} (about {{$.inputs.country}})")
}

func BenchmarkRenderFString(b *testing.B) {
	benchRender(b, "fstring",
		"You are an expert on {country}. Population {context[population]:.1f}M.",
		"{question} (about {inputs[country]})")
}

// The same prompt in jinja2, with a loop and a filter.
func BenchmarkRenderJinja(b *testing.B) {
	benchRender(b, "jinja2",
		"You are an expert on {{ country }}. Speaks {% for l in context.languages %}{{ l|lower }} {% endfor %}.",
		"{{ question }} (about {{ inputs.country }})")
}

func BenchmarkParse(b *testing.B) {
	params := map[string]any{"prompt": map[string]any{
		"messages": []any{
			map[string]any{"role": "system", "content": "You are an expert on {{country}}."},
			map[string]any{"role": "user", "content": "{{question}}"},
		},
		"llm_config": map[string]any{"model": "gpt-4o-mini", "temperature": 0.2, "max_tokens": 256.0},
	}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := prompt.Parse(params); err != nil {
			b.Fatal(err)
		}
	}
}
