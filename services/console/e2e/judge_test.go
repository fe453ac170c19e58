package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/assayhq/assay/pkg/testutil/llmtest"
)

// TestJudgeConfigure: a custom provider pointing at the local model server
// (admitted by the runtime's egress allow-list, as platformtest sets it) is
// added and tested on the secrets page; the LLM judge is then configured
// in its form: its prompt an editable list of messages whose variables are
// highlighted and explained, its response type and template format
// selects, its model picked from the configured providers; saved, it
// scores a sample through that provider. A preset opens the same way.
func TestJudgeConfigure(t *testing.T) {
	env := Start(t)
	u := env.User(t, "judge@example.com")
	env.Platform.LLM.SetModels("llama-local")

	t.Run("secrets", func(t *testing.T) {
		ctx := env.SignedIn(t, u) // a browser each: each gets the whole deadline
		err := chromedp.Do(ctx,
			env.Visit("/console/settings/secrets"),
			chromedp.WaitVisible(byLabel("Secret kind")),
			pickOption(byLabel("Secret kind"), "custom_provider"),
			chromedp.WaitVisible(byLabel("Provider URL")),
			Type(`input[aria-label="Provider URL"]`, env.Platform.LLM.URL),
			Type(`input[aria-label="Provider slug"]`, "local"),
			Type(`input[aria-label="Models"]`, "llama-local"),
			ClickText("Add secret"),
			chromedp.WaitVisible(byLabel("Test connection of local")),
			chromedp.Click(byLabel("Test connection of local")),
			waitJS(`!!document.querySelector('[data-testid="test-local"]') && document.querySelector('[data-testid="test-local"]').innerText.includes("Connected")`),
		)
		if err != nil {
			t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
		}
		Screenshot(t, ctx)
	})

	t.Run("template", func(t *testing.T) {
		ctx := env.SignedIn(t, u) // a browser each: each gets the whole deadline
		err := chromedp.Do(ctx,
			env.Visit("/console/evaluators/new?template=auto_ai_critique"),
			WaitText("New evaluator: LLM-as-a-judge"),
			chromedp.WaitVisible(byLabel("content of message 2")),
			// the model picker lists the custom provider's model, and starts on it
			waitJS(`[...document.querySelectorAll('select[aria-label="model"] option')].some(o => o.value === "local/llama-local")`),
			waitJS(`document.querySelector('select[aria-label="model"]').value === "local/llama-local"`),
		)
		if err != nil {
			t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
		}
		text := pageText(t, ctx)
		if strings.Contains(text, "Unsupported field schema") || strings.Contains(text, "Missing items definition") {
			t.Errorf("the judge's form shows a schema error:\n%s", text)
		}
		ev := func(expr string) []string {
			t.Helper()
			v, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](expr))
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		roles := ev(`[...document.querySelectorAll('[data-testid="judge-messages"] select[aria-label^="role of message"]')].map(s => s.value)`)
		marks := ev(`[...document.querySelectorAll('[data-testid="judge-messages"] mark')].map(m => m.textContent)`)
		responseTypes := ev(`[...document.querySelectorAll('select[aria-label="response type"] option')].map(o => o.value)`)
		formats := ev(`[...document.querySelectorAll('select[aria-label="template format"] option')].map(o => o.value)`)
		format := ev(`[document.querySelector('select[aria-label="template format"]').value]`)[0]
		if strings.Join(roles, ",") != "system,user" {
			t.Errorf("roles of the prompt messages: %v", roles)
		}
		if !contains(marks, "{{inputs}}") || !contains(marks, "{{outputs}}") {
			t.Errorf("highlighted variables: %v", marks)
		}
		if strings.Join(responseTypes, ",") != "json_schema,json_object,text" || !contains(formats, "mustache") || !contains(formats, "curly") || format != "mustache" {
			t.Errorf("response types %v, template formats %v (chosen %q)", responseTypes, formats, format)
		}
		vars, err := chromedp.Run(ctx, chromedp.Text(testID("judge-variables")))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"inputs", "outputs", "correct_answer", "testcase", "application's output", "optional"} {
			if !strings.Contains(vars, want) {
				t.Errorf("the variables list lacks %q:\n%s", want, vars)
			}
		}

		schema, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[aria-label="answer schema"]').value`))
		if err != nil || !strings.Contains(schema, `"score"`) || !strings.Contains(schema, `"boolean"`) {
			t.Errorf("the judge's answer schema is not shown: %q %v", schema, err)
		}

		// Edit: a third message, then save and try it through the custom provider.
		env.Platform.LLM.Script(llmtest.Reply{Content: `{"score": true}`})
		err = chromedp.Do(ctx,
			ClickText("Add message"),
			chromedp.WaitVisible(byLabel("content of message 3")),
			Type(`textarea[aria-label="content of message 3"]`, "Be strict about {{country}}."),
			waitJS(`[...document.querySelectorAll('[data-testid="judge-variables"] li')].some(l => l.innerText.includes("country"))`),
			Type(string(byLabel("evaluator name")), "strict judge"),
			chromedp.Click(chromedp.CSS(`[data-testid="params-form"] button[type="submit"]`)),
			waitJS(`/\/console\/evaluators\/[0-9a-f-]{36}$/.test(location.pathname)`),
			chromedp.WaitEnabled(testID("try-run")),
		)
		if err != nil {
			t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
		}
		list := env.Platform.MustJSON(t, "POST", "/api/simple/evaluators/query", u.Key, map[string]any{})
		var params map[string]any
		for _, e := range dig(list, "evaluators").([]any) {
			if str(dig(e, "slug")) == "strict-judge" {
				params, _ = dig(e, "data", "parameters").(map[string]any)
			}
		}
		if params == nil {
			t.Fatalf("no evaluator strict-judge: %v", list)
		}
		msgs, _ := params["prompt_template"].([]any)
		if params["model"] != "local/llama-local" || len(msgs) != 3 || str(dig(msgs[len(msgs)-1], "content")) != "Be strict about {{country}}." {
			t.Errorf("saved parameters: %v", params)
		}
		// The try-out is prefilled with a sample that gives the column
		// the added message needs: the user types nothing to try it.
		sample, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[aria-label="sample inputs"]').value`))
		if err != nil {
			t.Fatal(err)
		}
		var inputs map[string]any
		if json.Unmarshal([]byte(sample), &inputs) != nil || inputs["country"] == nil {
			t.Errorf("the try-out's sample inputs %q do not give the prompt's variable country", sample)
		}
		err = chromedp.Do(ctx,
			chromedp.Click(testID("try-run")),
			chromedp.WaitVisible(testID("try-result")),
		)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := chromedp.Run(ctx, chromedp.Text(testID("try-result")))
		if !strings.Contains(out, `"success": true`) {
			t.Errorf("try through the custom provider: %q", out)
		}
		if r, ok := env.Platform.LLM.LastRequest(); !ok || r.Model() != "llama-local" {
			t.Errorf("the judge's call did not reach the custom provider's model: %q", r.Model())
		}
		Screenshot(t, ctx)

		// The saved evaluator is editable: an edited message is
		// committed as a new revision.
		before := env.Platform.MustJSON(t, "POST", "/api/evaluators/revisions/retrieve", u.Key, map[string]any{"evaluator_ref": map[string]any{"slug": "strict-judge"}})
		err = chromedp.Do(ctx,
			fillText(byLabel("content of message 3"), "Be very strict about {{country}}."),
			chromedp.Click(chromedp.CSS(`[data-testid="params-form"] button[type="submit"]`)),
			chromedp.WaitVisible(testID("committed")),
		)
		if err != nil {
			t.Fatalf("commit the edited judge: %v; page:\n%s", err, pageText(t, ctx))
		}
		after := env.Platform.MustJSON(t, "POST", "/api/evaluators/revisions/retrieve", u.Key, map[string]any{"evaluator_ref": map[string]any{"slug": "strict-judge"}})
		msgs, _ = dig(after, "evaluator_revision", "data", "parameters", "prompt_template").([]any)
		if str(dig(after, "evaluator_revision", "id")) == str(dig(before, "evaluator_revision", "id")) || len(msgs) != 3 ||
			str(dig(msgs[2], "content")) != "Be very strict about {{country}}." || dig(after, "evaluator_revision", "data", "parameters", "model") != "local/llama-local" {
			t.Errorf("the edit is not a new revision with the edited message: before %v, after %v", before, after)
		}
		t.Run("answer", func(t *testing.T) { // how the judge's answer is read, further down the form
			if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('select[aria-label="response type"]').scrollIntoView()`)); err != nil {
				t.Fatal(err)
			}
			Screenshot(t, ctx)
		})
	})

	t.Run("preset", func(t *testing.T) {
		ctx := env.SignedIn(t, u) // a browser each: each gets the whole deadline
		err := chromedp.Do(ctx,
			env.Visit("/console/evaluators/new?template=auto_ai_critique&preset=conciseness"),
			WaitText("New evaluator: Conciseness"),
			chromedp.WaitVisible(byLabel("content of message 1")),
			// the preset's gpt-4o-mini gives way to the project's custom provider
			waitJS(`document.querySelector('select[aria-label="model"]').value === "local/llama-local"`),
		)
		if err != nil {
			t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
		}
		first, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[aria-label="content of message 1"]').value`))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(first, "as short as it can be") {
			t.Errorf("the preset's system message: %q", first)
		}
		Screenshot(t, ctx)
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
