package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestEvaluatorCreateAndTry: an exact-match evaluator is created from the
// catalog template with the form generated from its parameters schema,
// then tried on one sample through the runtime. The user names it; its
// slug is made from the name, free in the project (the seeded evaluator
// holds exact-match already), and the name is what the pages show.
func TestEvaluatorCreateAndTry(t *testing.T) {
	env := Shared(t)
	u := env.User(t, "evaluators@example.com")
	ctx := env.SignedIn(t, u)
	err := chromedp.Do(ctx,
		env.Visit("/console/evaluators"),
		// The project's evaluators (the seeded exact-match among them) load
		// apart from the catalog and push it down: wait for both, or the
		// click lands where the template link was (seen under load in CI).
		WaitText("exact-match"),
		WaitText("Exact Match classifiers"),
		chromedp.Click(chromedp.CSS(`a[href$="template=auto_exact_match"]`)),
		WaitText("New evaluator: Exact Match"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="params-form"] input#root_correct_answer_key`)),
		Type(string(byLabel("evaluator name")), "Exact match"),
		waitJS(`document.querySelector('[data-testid="slug-preview"]')?.innerText.includes("exact-match")`),
		chromedp.Click(chromedp.CSS(`[data-testid="params-form"] button[type="submit"]`)),
		waitJS(`/\/console\/evaluators\/[0-9a-f-]{36}$/.test(location.pathname)`),
		// The button shows, disabled, before the evaluator has loaded; a
		// click then does nothing (seen under load in CI).
		chromedp.WaitEnabled(testID("try-run")),
		chromedp.Click(testID("try-run")),
		chromedp.WaitVisible(testID("try-result")),
		waitJS(`document.querySelector("h1")?.innerText === "Exact match"`),
		// What it does comes first, in words, not its catalog URI.
		waitJS(`/^Succeeds when .+ Template: (Exact Match · )?svc:builtin:auto_exact_match:v0$/.test(document.querySelector('h1 + p')?.innerText ?? "")`),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	out, err := chromedp.Run(ctx, chromedp.Text(testID("try-result")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"success": true`) {
		t.Errorf("try on a matching sample: %q", out)
	}
	Screenshot(t, ctx)
	list := env.Platform.MustJSON(t, "POST", "/api/simple/evaluators/query", u.Key, map[string]any{})
	found := false
	for _, e := range dig(list, "evaluators").([]any) {
		if str(dig(e, "slug")) == "exact-match-2" {
			found = true
			if got := str(dig(e, "name")); got != "Exact match" {
				t.Errorf("the evaluator is named %q, want the name typed", got)
			}
			if got := str(dig(e, "data", "parameters", "correct_answer_key")); got != "correct_answer" {
				t.Errorf("the form's default parameter: correct_answer_key %q", got)
			}
		}
	}
	if !found {
		t.Errorf("no evaluator exact-match-2 (the slug of the name typed, exact-match being taken): %v", list)
	}
	t.Run("custom code editor", func(t *testing.T) { customCodeEvaluatorEditor(t, env, u, ctx) })
}
