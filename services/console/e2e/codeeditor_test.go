package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// customCodeEvaluatorEditor: the custom-code template opens with its
// default code in a code editor under the signature version 3 calls, that
// default scores the page's matching sample 1, and code edited in the
// editor is what the created evaluator stores and runs. It runs in
// TestEvaluatorCreateAndTry, with that test's platform, user and browser.
func customCodeEvaluatorEditor(t *testing.T, env *Env, u User, ctx context.Context) {
	editor := string(testID("code-widget")) + " .cm-content"
	err := chromedp.Do(ctx,
		env.Visit("/console/evaluators/new?template=auto_custom_code_run"),
		WaitText("New evaluator: Code Evaluation"),
		chromedp.WaitVisible(chromedp.CSS(editor)),
		WaitText("def evaluate(inputs: dict, outputs, trace: dict | None) -> float:"),
		WaitText(`expected = inputs.get("correct_answer")`),
		// The default on the page's sample (Paris expected, Paris answered).
		chromedp.WaitEnabled(testID("try-run")),
		chromedp.Click(testID("try-run")),
		chromedp.WaitVisible(testID("try-result")),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	out, err := chromedp.Run(ctx, chromedp.Text(testID("try-result")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"score": 1`) || !strings.Contains(out, `"success": true`) {
		t.Errorf("the default code on a matching sample: %q", out)
	}
	Screenshot(t, ctx)

	// Another runtime swaps the untouched default for that runtime's, which
	// runs too (and scores a wrong answer 0); back to Python, the Python
	// default returns.
	err = chromedp.Do(ctx,
		pickOptionText("#root_runtime", "javascript"),
		waitJS(`document.querySelector(`+"`"+editor+"`"+`).innerText.includes("String(inputs.correct_answer)")`),
		waitJS(`document.querySelector('[data-testid="code-signature"]').innerText.includes("function evaluate(inputs, outputs, trace)")`),
		// A wrong answer this time, so the result read is this run's.
		fillText(byLabel("sample output"), "Lyon"),
		chromedp.Click(testID("try-run")),
		waitJS(`(document.querySelector('[data-testid="try-result"]')?.innerText ?? "").includes('"score": 0')`),
		pickOptionText("#root_runtime", "python"),
		waitJS(`document.querySelector(`+"`"+editor+"`"+`).innerText.includes('expected = inputs.get("correct_answer")')`),
	)
	if err != nil {
		t.Fatalf("switching the runtime: %v; page:\n%s", err, pageText(t, ctx))
	}

	// Replace the code as a user does: select all in the editor, type.
	const code = "def evaluate(inputs, outputs, trace): return 0.25"
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(editor)),
		chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: code})
			return err
		}),
		waitJS(`document.querySelector(`+"`"+editor+"`"+`).innerText.trim() === `+"`"+code+"`"),
		Type(string(byLabel("evaluator name")), "Edited code"),
		chromedp.Click(chromedp.CSS(`[data-testid="params-form"] button[type="submit"]`)),
		waitJS(`/\/console\/evaluators\/[0-9a-f-]{36}$/.test(location.pathname)`),
		chromedp.WaitVisible(chromedp.CSS(editor)),
		WaitText("return 0.25"),
		chromedp.WaitEnabled(testID("try-run")),
		chromedp.Click(testID("try-run")),
		waitJS(`(document.querySelector('[data-testid="try-result"]')?.innerText ?? "").includes('"score": 0.25')`),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	list := env.Platform.MustJSON(t, "POST", "/api/simple/evaluators/query", u.Key, map[string]any{})
	found := false
	for _, e := range dig(list, "evaluators").([]any) {
		if str(dig(e, "slug")) == "edited-code" {
			found = true
			if got := str(dig(e, "data", "parameters", "code")); got != code {
				t.Errorf("stored code %q, typed %q", got, code)
			}
			if got := str(dig(e, "data", "parameters", "version")); got != "3" {
				t.Errorf("stored version %q", got)
			}
		}
	}
	if !found {
		t.Errorf("no evaluator edited-code: %v", list)
	}
}

// pickOptionText picks the option of a <select> by its visible text, the
// way a user does (rjsf's selects carry indexes as their values).
func pickOptionText(sel, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => {
		const el = document.querySelector(%q);
		const o = el && [...el.options].find(o => o.text === %q);
		if (!o) return false;
		Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, "value").set.call(el, o.value);
		el.dispatchEvent(new Event("change", {bubbles: true}));
		return true;
	})()`, sel, text), chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second))
}
