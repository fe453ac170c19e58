package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// compareCountries are the testcases of the comparison: the second
// revision prompts with "alias", which differs from "country" in the
// last four, so it regresses on those (the model server echoes).
var compareCountries = []struct{ country, alias string }{
	{"France", "France"}, {"Spain", "Spain"}, {"Italy", "Italy"}, {"Chile", "Chile"},
	{"Peru", "Perú"}, {"Japan", "Nippon"}, {"Egypt", "Misr"}, {"Greece", "Hellas"},
}

// runCapitals starts a run of the application revision over the testset
// revision with the evaluator and waits for it to end.
func runCapitals(t *testing.T, env *Env, key, name, testsetRev, appRev, evRev string) string {
	t.Helper()
	run := env.Platform.MustJSON(t, "POST", "/api/simple/evaluations/", key, map[string]any{"evaluation": map[string]any{
		"name": name, "data": map[string]any{
			"testset_steps":     []any{testsetRev},
			"application_steps": map[string]any{appRev: "auto"},
			"evaluator_steps":   map[string]any{evRev: "auto"},
		}}})
	id := str(dig(run, "evaluation", "id"))
	if id == "" {
		t.Fatalf("no evaluation: %v", run)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := env.Platform.MustJSON(t, "GET", "/api/evaluations/runs/"+id+"/progress", key, nil)
		if s := str(dig(r, "progress", "status")); s == "success" || s == "failure" || s == "errors" {
			return id
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s did not end: %v", id, r)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestCompare runs the comparison's tests on one platform (a start is
// the longest part of each).
func TestCompare(t *testing.T) {
	env := Shared(t)
	t.Run("readable", func(t *testing.T) { compareReadable(t, env) })
	t.Run("large runs", func(t *testing.T) { compareLargeRuns(t, env) })
}

// compareReadable: two runs of one application, the second revision
// regressing on four of eight testcases. The comparison names the runs by
// application, variant and revision and the metrics by evaluator (no step
// key, no hex slug), shows each delta with its 95% interval, colours the
// exact-match drop as worse, and "regressions only" keeps the four
// testcases, each with both outputs side by side and their difference.
func compareReadable(t *testing.T, env *Env) {
	u := env.User(t, "compare@example.com")
	key := u.Key
	var rows []any
	for _, c := range compareCountries {
		rows = append(rows, map[string]any{"data": map[string]any{"country": c.country, "alias": c.alias, "correct_answer": "echo: " + c.country}})
	}
	ts := env.Platform.MustJSON(t, "POST", "/api/simple/testsets/", key, map[string]any{"testset": map[string]any{
		"slug": "capitals", "name": "capitals", "data": map[string]any{"testcases": rows}}})
	prompt := func(v string) map[string]any {
		return map[string]any{"uri": "agenta:builtin:completion:v0", "parameters": map[string]any{"prompt": map[string]any{
			"messages":        []any{map[string]any{"role": "user", "content": "{{" + v + "}}"}},
			"template_format": "curly", "llm_config": map[string]any{"model": "gpt-4o-mini"}}}}
	}
	app := env.Platform.MustJSON(t, "POST", "/api/simple/applications/", key, map[string]any{"application": map[string]any{
		"name": "Capitals bot", "slug": "capitals-bot", "data": prompt("country")}})
	appID := str(dig(app, "application", "id"))
	v2 := env.Platform.MustJSON(t, "PUT", "/api/simple/applications/"+appID, key, map[string]any{"application": map[string]any{
		"id": appID, "name": "Capitals bot", "data": prompt("alias")}})
	ev := env.Platform.MustJSON(t, "POST", "/api/simple/evaluators/", key, map[string]any{"evaluator": map[string]any{
		"slug": "capital-exact", "name": "Capital exact",
		"data": map[string]any{"uri": "agenta:builtin:auto_exact_match:v0", "parameters": map[string]any{"correct_answer_key": "correct_answer"}},
	}})
	tsRev, evRev := str(dig(ts, "testset", "revision_id")), str(dig(ev, "evaluator", "revision_id"))
	rev1, rev2 := str(dig(app, "application", "revision_id")), str(dig(v2, "application", "revision_id"))
	if rev1 == "" || rev2 == "" || rev1 == rev2 {
		t.Fatalf("application revisions %q and %q: %v", rev1, rev2, v2)
	}
	base := runCapitals(t, env, key, "baseline", tsRev, rev1, evRev)
	cand := runCapitals(t, env, key, "alias prompt", tsRev, rev2, evRev)

	ctx := env.SignedIn(t, u)
	err := chromedp.Do(ctx,
		env.Visit(fmt.Sprintf("/console/evaluations/compare?runs=%s,%s", base, cand)),
		chromedp.WaitVisible(testID("comparison")),
		waitJS(`document.querySelectorAll('[data-testid="scenario-row"]').length === 8`),
		waitJS(`document.querySelectorAll('[data-testid="output"]').length === 16`),
		// The names come with the evaluators' and applications' lists,
		// read beside the comparison.
		waitJS(`document.querySelector('[data-testid="comparison"]').innerText.includes("Capital exact") && document.body.innerText.includes("Capitals bot v2")`),
		// What each run cost, and what a point of its success rate cost.
		waitJS(`document.querySelector('[data-testid="cost-row"]')?.innerText.includes("$")`),
		waitJS(`document.querySelector('[data-testid="cost-per-point"]')?.innerText.includes("per point")`),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	txt := pageText(t, ctx)
	for _, want := range []string{"Capitals bot", "v1", "v2", "Capital exact", "95% CI"} {
		if !strings.Contains(txt, want) {
			t.Errorf("the comparison does not show %q:\n%s", want, txt)
		}
	}
	if m := regexp.MustCompile(`(evaluator|application)-[0-9a-f]{12}|\b[0-9a-f]{12}\b`).FindString(txt); m != "" {
		t.Errorf("the comparison shows %q, a step key or a generated slug:\n%s", m, txt)
	}
	// success drops by 0.5 on eight pairs (four testcases of eight): the
	// 95% interval is below zero, but the verdict is the registry's,
	// corrected for every metric the comparison tests (Holm), and the
	// page says which it is and names the method.
	cmp := env.Platform.MustJSON(t, "POST", "/api/evaluations/runs/compare", key, map[string]any{"run_ids": []string{base, cand}})
	want := ""
	for _, m := range dig(cmp, "comparison", "metrics").([]any) {
		if strings.HasSuffix(str(dig(m, "path")), "outputs.success") {
			want = str(dig(m, "runs", 1, "verdict"))
		}
	}
	if want == "" {
		t.Fatalf("the comparison has no verdict for success: %v", cmp)
	}
	// A pass rate reads as one: its means in percent, its delta and
	// intervals in percentage points (not "1" and "-0.5", which read as
	// scores).
	verdict, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const row = [...document.querySelectorAll('[data-testid="metric-row"]')].find(r => r.innerText.includes("Capital exact") && r.innerText.includes("success"));
		const d = row && row.querySelector('[data-testid="delta"]');
		return d ? d.dataset.verdict + " " + d.innerText : "";
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	means, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const row = [...document.querySelectorAll('[data-testid="metric-row"]')].find(r => r.innerText.includes("Capital exact") && r.innerText.includes("success"));
		return row ? [...row.querySelectorAll("td")].slice(1).map(td => td.innerText.split("\n")[0].trim()).join(" | ") : "";
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if means != "100% pass n=8 | 50% pass n=8" {
		t.Errorf("the success pass rates read %q, want %q", means, "100% pass n=8 | 50% pass n=8")
	}
	// A cost reads in dollars, not as 1.50e-6.
	cost, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const row = [...document.querySelectorAll('[data-testid="metric-row"]')].find(r => r.innerText.includes("cost ($)"));
		return row ? row.querySelectorAll("td")[1].innerText.trim() : "";
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^\$0\.0+[1-9]\d? n=\d+$`).MatchString(cost) {
		t.Errorf("the baseline's cost reads %q, want dollars in decimals (\"$0.0000015 n=8\")", cost)
	}
	for _, part := range []string{want + " ", "-50 points", "95% CI -94.7 to -5.3 points", "corrected", "Holm", "testcases to detect ±5 points"} {
		if !strings.Contains(verdict, part) {
			t.Errorf("the success delta reads %q, want %q in it (the registry's verdict %s, the corrected interval, the sample size)", verdict, part, want)
		}
	}
	if !strings.HasPrefix(verdict, want+" ") {
		t.Errorf("the success delta's verdict reads %q, the registry's is %s", verdict, want)
	}
	if !strings.Contains(txt, "Holm's method") {
		t.Errorf("the comparison does not name its correction:\n%s", txt)
	}
	Screenshot(t, ctx)

	err = chromedp.Do(ctx,
		chromedp.Click(byLabel("regressions only")),
		waitJS(`document.querySelectorAll('[data-testid="scenario-row"]').length === 4`),
		waitJS(`document.querySelectorAll('[data-testid="output"]').length === 8`),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="scenario-row"]')].map(r => r.innerText)`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range compareCountries[4:] {
		found := false
		for _, row := range shown {
			found = found || strings.Contains(row, "echo: "+c.country) && strings.Contains(row, c.alias)
		}
		if !found {
			t.Errorf("the regressions are %q, want %s's outputs side by side among them", shown, c.country)
		}
	}
	// The candidate's output marks what changed against the baseline's.
	changed, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('[data-testid="scenario-row"] ins')].map(e => e.innerText).join("|")`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(changed, "Nippon") {
		t.Errorf("the diff marks %q as inserted, want Nippon among them", changed)
	}
	saveScreenshot(t, ctx, "regressions")

	// Picking revisions for a new run: the default variant's generated
	// slug is not what the list shows.
	err = chromedp.Do(ctx,
		env.Visit("/console/evaluations"),
		chromedp.Click(chromedp.CSS(`[data-testid="new-run"] summary`)),
		waitJS(`document.querySelector('[aria-label="application"]').options.length > 1`),
		pickOption(byLabel("application"), appID),
		chromedp.WaitVisible(chromedp.CSS(`[aria-label^="revision "]`)),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	revs, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('[aria-label^="revision "]')].map(e => e.parentElement.innerText).join("\n")`))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`\b[0-9a-f]{12}\b`).FindString(revs); m != "" || !strings.Contains(revs, "v2") {
		t.Errorf("the revisions to run read %q: a generated slug (%q) or no v2", revs, m)
	}
}
