package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestEvaluationRun: with a testset, an application and an exact-match
// evaluator made through the API, a run is created on the evaluations
// page; the page follows its progress to the end and shows the results
// (inputs, outputs, scores, trace links), the filter by score, and the
// charts.
func TestEvaluationRun(t *testing.T) {
	env := Start(t)
	u := env.User(t, "evaluations@example.com")
	key := u.Key
	// The model server echoes the last user message: "echo: <country>".
	// Two answers match, one does not.
	apiUpload(t, env, key, "capitals", "json", []byte(`[
		{"country": "France", "correct_answer": "echo: France"},
		{"country": "Spain", "correct_answer": "echo: Spain"},
		{"country": "Italy", "correct_answer": "Rome"}]`))
	env.Platform.MustJSON(t, "POST", "/api/simple/applications/", key, map[string]any{"application": map[string]any{
		"slug": "echoer", "name": "echoer",
		"data": map[string]any{"uri": "agenta:builtin:completion:v0", "parameters": map[string]any{"prompt": map[string]any{
			"messages":        []any{map[string]any{"role": "user", "content": "{{country}}"}},
			"template_format": "curly", "llm_config": map[string]any{"model": "gpt-4o-mini"}}}},
	}})
	env.Platform.MustJSON(t, "POST", "/api/simple/evaluators/", key, map[string]any{"evaluator": map[string]any{
		"slug": "em", "name": "em",
		"data": map[string]any{"uri": "agenta:builtin:auto_exact_match:v0", "parameters": map[string]any{"correct_answer_key": "correct_answer"}},
	}})

	ctx := env.SignedIn(t, u)
	err := chromedp.Do(ctx,
		env.Visit("/console/evaluations"),
		WaitText("New evaluation"),
		chromedp.Click(chromedp.CSS(`[data-testid="new-run"] summary`)),
		Type(string(byLabel("run name")), "capitals run"),
		waitJS(`document.querySelector('[aria-label="testset"]').options.length > 1`),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[document.querySelector('[aria-label="testset"]').options[1].value]`))
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		pickOption(byLabel("testset"), ids[0]),
		waitJS(`document.querySelector('[aria-label="application"]').options.length > 1`),
	)
	if err != nil {
		t.Fatal(err)
	}
	app, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[aria-label="application"]').options[1].value`))
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		pickOption(byLabel("application"), app),
		chromedp.Click(chromedp.CSS(`[aria-label^="revision "]`)),
		chromedp.Click(byLabel("evaluator em")),
		chromedp.Click(testID("start-run")),
		chromedp.WaitVisible(testID("progress")),
		waitJS(`document.querySelector('[data-testid="run-status"]')?.innerText === "success"`),
		waitJS(`document.querySelectorAll('[data-testid="result-row"]').length === 3`),
		WaitText("echo: Italy"),
		chromedp.WaitVisible(testID("chart")),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	txt := pageText(t, ctx)
	for _, want := range []string{"capitals run", "France", "echo: Spain", "pass rate 66.7% (2/3)", "latency (ms)"} {
		if !strings.Contains(txt, want) {
			t.Errorf("the run page does not show %q:\n%s", want, txt)
		}
	}
	// Every application cell links to its trace page.
	links, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="result-row"] a[title="trace"]')].map(a => a.getAttribute("href"))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(links) < 3 || !strings.HasPrefix(links[0], "/console/traces/") {
		t.Errorf("trace links %q", links)
	}
	Screenshot(t, ctx)

	// Filter: the failing scenario only.
	col, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelector('[aria-label="score column"]').options].map(o => o.value).find(v => v.endsWith("outputs.success")) || ""`))
	if err != nil || col == "" {
		t.Fatalf("no success score column (%v)", err)
	}
	err = chromedp.Do(ctx,
		pickOption(byLabel("score column"), col),
		pickOption(byLabel("score operator"), "<"),
		WaitText("1 of 3 scenarios"),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	// The filtered row's inputs are read for it (a query of its testcase).
	if err := chromedp.Do(ctx, waitJS(`document.querySelector('[data-testid="result-row"]').innerText.includes("Italy")`)); err != nil {
		row, _ := chromedp.Run(ctx, chromedp.Text(testID("result-row")))
		t.Errorf("the filtered row is %q, want Italy's (%v)", row, err)
	}
}
