package e2e_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/assayhq/assay/services/console/e2e"
)

// TestPlaygroundLoadTestcase: in the playground a testcase of a testset
// fills the template variables, and the run answers for it (the local model
// server echoes the last user message).
func TestPlaygroundLoadTestcase(t *testing.T) {
	env := e2e.Shared(t)
	u := env.User(t, "load-testcase@example.com")
	env.Platform.MustJSON(t, "POST", "/api/simple/testsets/", u.Key, map[string]any{"testset": map[string]any{
		"slug": "capitals", "name": "capitals", "data": map[string]any{"testcases": []any{
			map[string]any{"data": map[string]any{"country": "France", "correct_answer": "Paris"}},
			map[string]any{"data": map[string]any{"country": "Peru", "correct_answer": "Lima"}},
		}}}})
	app := env.Platform.MustJSON(t, "POST", "/api/simple/applications/", u.Key, map[string]any{"application": map[string]any{
		"slug": "asker", "name": "asker",
		"data": map[string]any{"uri": "agenta:builtin:completion:v0", "parameters": map[string]any{"prompt": map[string]any{
			"messages":        []any{map[string]any{"role": "user", "content": "Capital of {{country}}?"}},
			"template_format": "curly", "llm_config": map[string]any{"model": "gpt-4o-mini"}}}},
	}})
	appID := app["application"].(map[string]any)["id"].(string)

	ctx := env.SignedIn(t, u)
	if err := chromedp.Do(ctx,
		env.Visit("/console/playground?app="+appID),
		chromedp.WaitVisible(chromedp.CSS(`[aria-label="variable country"]`)),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('select[aria-label="Testcase testset"] option')].some(o => o.innerText === "capitals")`),
		pickByText(`select[aria-label="Testcase testset"]`, "capitals"),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('select[aria-label="Testcase"] option')].some(o => o.innerText.startsWith("2. Peru"))`),
		pickByText(`select[aria-label="Testcase"]`, "2. Peru"),
		chromedp.Poll[chromedp.Void](`document.querySelector('[aria-label="variable country"]').value === "Peru"`),
		chromedp.Click(chromedp.CSS(`[data-testid="run-all"]`)),
		chromedp.Poll[chromedp.Void](`document.querySelector('[data-testid="pane-output"]').innerText.includes("Peru")`),
	); err != nil {
		t.Fatal(err)
	}
	e2e.Screenshot(t, ctx)
	// The picker names the loaded testcase by its values, and its
	// options are testcases, not "row…".
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => { const s = document.querySelector('select[aria-label="Testcase"]');
		return [s.options[s.selectedIndex].innerText, ...[...s.options].map(o => o.innerText)]; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(shown[0], "2. Peru") {
		t.Errorf("the testcase picker shows %q after Peru's testcase was loaded; want it named by its values", shown[0])
	}
	for _, o := range shown[1:] {
		if strings.HasPrefix(o, "row") {
			t.Errorf("the testcase picker has an option %q; want testcases named by their values (%q)", o, shown[1:])
		}
	}
	out, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="pane-output"]`)))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out) != "echo: Capital of Peru?" {
		t.Fatalf("the run of the loaded testcase answered %q", out)
	}
}

// pickByText picks the first option of the <select> sel whose text starts
// with text, as a user does (through the value setter React listens to).
func pickByText(sel, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const s = document.querySelector(%q);
		const o = [...s.options].find((o) => o.innerText.startsWith(%q));
		if (!o) throw new Error("no option " + %q);
		Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, "value").set.call(s, o.value);
		s.dispatchEvent(new Event("change", {bubbles: true}));
	})()`, sel, text, text))
}
