package e2e

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestEvaluationRun: with a testset, an application and an exact-match
// evaluator made through the API, a run is created on the evaluations
// page; the page follows its progress to the end and shows the results
// (inputs, outputs, scores, trace links), the filter by score, and the
// charts; the CSV export; and an online evaluation (onlineEvaluation).
func TestEvaluationRun(t *testing.T) {
	env := Shared(t)
	u := env.User(t, "evaluations@example.com")
	key := u.Key
	// The model server echoes the last user message: "echo: <country>".
	// Two answers match, one does not; the broken evaluator fails every
	// scenario, so the run ends with errors.
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
	// Evaluators named apart from their slugs (the columns show names): a
	// boolean verdict, a score with a verdict beside it, and one whose
	// every execution fails (an invalid pattern).
	for _, ev := range []struct {
		slug, name, uri string
		params          map[string]any
	}{
		{"em", "Capital exact", "agenta:builtin:auto_exact_match:v0", map[string]any{"correct_answer_key": "correct_answer"}},
		{"lev", "Edit distance", "agenta:builtin:auto_levenshtein_distance:v0", map[string]any{"correct_answer_key": "correct_answer"}},
		{"broken", "Broken pattern", "agenta:builtin:auto_regex_test:v0", map[string]any{"regex_pattern": "(", "regex_should_match": true}},
	} {
		env.Platform.MustJSON(t, "POST", "/api/simple/evaluators/", key, map[string]any{"evaluator": map[string]any{
			"slug": ev.slug, "name": ev.name, "data": map[string]any{"uri": ev.uri, "parameters": ev.params},
		}})
	}

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
		chromedp.Click(byLabel("evaluator lev")),
		chromedp.Click(byLabel("evaluator broken")),
		// Before Start, the form says what the run should cost.
		waitJS(`document.querySelector('[data-testid="run-estimate"]')?.innerText.includes("Estimated cost $")`),
		waitJS(`document.querySelector('[data-testid="run-estimate"]')?.innerText.includes("3 model calls (gpt-4o-mini)")`),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	saveScreenshot(t, ctx, "new-run-estimate")
	err = chromedp.Do(ctx,
		chromedp.Click(testID("start-run")),
		chromedp.WaitVisible(testID("progress")),
		waitJS(`document.querySelector('[data-testid="run-status"]')?.innerText === "errors"`),
		waitJS(`document.querySelectorAll('[data-testid="result-row"]').length === 3`),
		WaitText("echo: Italy"),
		chromedp.WaitVisible(testID("chart")),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	txt := pageText(t, ctx)
	// The run's model calls: one per testcase, none from the cache yet.
	if err := chromedp.Do(ctx, WaitText("Model calls: 3 made, 0 answered from the cache")); err != nil {
		t.Errorf("the run page does not count its model calls: %v\n%s", err, pageText(t, ctx))
	}
	for _, want := range []string{"capitals run", "France", "echo: Spain", "pass rate 66.7% (2/3)", "latency (ms)"} {
		if !strings.Contains(txt, want) {
			t.Errorf("the run page does not show %q:\n%s", want, txt)
		}
	}
	// The broken evaluator never gave a verdict: its chart says it did
	// not run, never a pass rate of 0% (a verdict it did not give).
	broken, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('[data-testid="charts"] section')]
		.filter(s => s.querySelector("h3")?.innerText === "Broken pattern").map(s => s.innerText).join("\n")`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(broken, "did not run") || strings.Contains(broken, "pass rate") || strings.Contains(broken, "success") {
		t.Errorf("the chart of the evaluator that never ran reads %q; want it to say it did not run, and no pass rate nor \"success\"", broken)
	}
	// Every scenario errored (the broken evaluator): they are finished,
	// with errors, not "0/3 done", and the bar is not success's green.
	prog, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="progress"] p').innerText + " | " +
		getComputedStyle(document.querySelector('[role="progressbar"] > div')).backgroundColor`))
	if err != nil {
		t.Fatal(err)
	}
	prog, fill, _ := strings.Cut(prog, " | ")
	if !strings.Contains(prog, "scenarios 3/3 finished, 3 with errors") || fill == "rgb(68, 170, 68)" {
		t.Errorf("a run whose every scenario errored reads %q with a bar of %s; want \"scenarios 3/3 finished, 3 with errors\" and no success green", prog, fill)
	}
	// Every application cell links to its trace page.
	links, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="result-row"] a[title="trace"]')].map(a => a.getAttribute("href"))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(links) < 3 || !strings.HasPrefix(links[0], "/console/traces/") {
		t.Errorf("trace links %q", links)
	}
	checkVerdicts(t, ctx)
	checkCSV(t, env, u, ctx)
	Screenshot(t, ctx)

	// Filter: the failing scenario only.
	col, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelector('[aria-label="score column"]').options].find(o => o.innerText === "Capital exact · success")?.value || ""`))
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
	// The filtered row shows its inputs (the testset revision's testcases).
	if err := chromedp.Do(ctx, waitJS(`document.querySelector('[data-testid="result-row"]').innerText.includes("Italy")`)); err != nil {
		row, _ := chromedp.Run(ctx, chromedp.Text(testID("result-row")))
		t.Errorf("the filtered row is %q, want Italy's (%v)", row, err)
	}

	checkRateLimitNotice(t, env, ctx, key)
	checkBudgetStop(t, env, ctx, key)

	// A larger run, seeded through the API: the table is a window of rows
	// with their verdicts, scrolled to the last one (BenchmarkResultsPage
	// measures a run of 5,000).
	measureResultsPage(t, env, u, 600)

	// An online evaluation, made in the console, scores production traces.
	t.Run("online evaluation", func(t *testing.T) { onlineEvaluation(t, env, u, ctx) })
	// One with a daily budget pauses, and says so.
	t.Run("online evaluation paused", func(t *testing.T) { pausedOnlineEvaluation(t, env, u, ctx) })
}

// checkBudgetStop: a run whose budget its first model call exceeds is
// cancelled, and its page says so, naming the budget.
func checkBudgetStop(t *testing.T, env *Env, ctx context.Context, key string) {
	t.Helper()
	var rows []any
	for _, c := range []string{"Peru", "Chile", "Japan", "Kenya"} {
		rows = append(rows, map[string]any{"data": map[string]any{"country": c}})
	}
	ts := env.Platform.MustJSON(t, "POST", "/api/simple/testsets/", key, map[string]any{"testset": map[string]any{
		"slug": "budgeted", "name": "budgeted", "data": map[string]any{"testcases": rows}}})
	apps := env.Platform.MustJSON(t, "POST", "/api/simple/applications/query", key, map[string]any{})
	appRev := str(dig(apps, "applications", 0, "revision_id"))
	ev := env.Platform.MustJSON(t, "POST", "/api/simple/evaluations/", key, map[string]any{"evaluation": map[string]any{
		"name": "budgeted run", "data": map[string]any{"testset_steps": []any{str(dig(ts, "testset", "revision_id"))},
			"application_steps": []any{appRev}, "model_cache": false, "budget": 0.000001,
			"concurrency": map[string]any{"batch_size": 1}}}})
	id := str(dig(ev, "evaluation", "id"))
	err := chromedp.Do(ctx,
		env.Visit("/console/evaluations/"+id),
		waitJS(`document.querySelector('[data-testid="stop-reason"]')?.innerText.includes("budget of $")`),
	)
	if err != nil {
		t.Fatalf("the budgeted run's page never said why it stopped: %v; page:\n%s", err, pageText(t, ctx))
	}
	// The one cell that ran cost $0.0000015: a cost reads in dollars in
	// the results table and under its chart, never as 1.50e-6.
	if err := chromedp.Do(ctx, waitJS(`document.querySelector('[data-testid="charts"]')?.innerText.includes("$0.0000015")`)); err != nil {
		t.Fatalf("the cost chart does not read in dollars: %v; page:\n%s", err, pageText(t, ctx))
	}
	// The table's cost column comes with the per-scenario metrics, which
	// the page reads after the run's global record: wait for it.
	tableCost := chromedp.Do(ctx, waitJS(`[...document.querySelectorAll("td.num")].some((td) => td.innerText === "$0.0000015")`)) == nil
	if text := pageText(t, ctx); !tableCost || strings.Contains(text, "e-6") {
		t.Fatalf("a cost in the results table does not read $0.0000015, or a cost reads in scientific notation; page:\n%s", text)
	}
	// Its scenarios after the first were cancelled, not finished: the
	// progress line counts them apart.
	prog, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="progress"] p').innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(prog, " cancelled") || strings.Contains(prog, "4/4 finished") {
		t.Errorf("the budget-stopped run's progress reads %q; want its cancelled scenarios counted as cancelled, not finished", prog)
	}
	saveScreenshot(t, ctx, "budget-stopped")
}

// checkVerdicts: the results table of TestEvaluationRun's run reads as a
// verdict per evaluator, by the evaluator's name: ✓ for France, ✗ for
// Italy ("echo: Italy" is not "Rome"), a number for the edit distance,
// the failed evaluator's error message inline with its trace a click
// away; never the cell's execution status "success". The inputs are the
// testset's columns, the expected answer stands beside the output, the
// rows are in testcase order and the charts are in view beside the table.
func checkVerdicts(t *testing.T, ctx context.Context) {
	t.Helper()
	// A cell reads "…" until its verdict or output is read (the metrics
	// and traces come after the rows): wait for them all, as a reader
	// would, rather than read the table at one moment (seen under load).
	if err := chromedp.Do(ctx, waitJS(`[...document.querySelectorAll('[data-testid="result-row"]')].every(r => !r.innerText.includes("…"))`)); err != nil {
		t.Errorf("cells still loading: %v", err)
	}
	type table struct {
		Headers []string   `json:"headers"`
		Rows    [][]string `json:"rows"`
		Charts  bool       `json:"charts"`
		Links   []int      `json:"links"`
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[table](`(() => {
		const t = document.querySelector('[data-testid="results"] table');
		const headers = [...t.querySelectorAll("thead th")].map(h => h.innerText.trim());
		const rows = [...t.querySelectorAll('[data-testid="result-row"]')].map(r => [...r.children].map(c => c.innerText.trim()));
		const links = [...t.querySelectorAll('[data-testid="result-row"]')].map(r => r.querySelectorAll('a[title="trace"]').length);
		const c = document.querySelector('[data-testid="chart"]');
		const charts = !!c && c.getBoundingClientRect().top < window.innerHeight;
		return {headers, rows, charts, links};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int {
		for i, h := range got.Headers {
			if h == name || strings.HasPrefix(h, name+"\n") || strings.HasPrefix(h, name+" ") {
				return i
			}
		}
		t.Fatalf("no column %q in %q", name, got.Headers)
		return -1
	}
	country, expected, output := col("country"), col("correct_answer"), col("echoer v1 output")
	exact, lev, broken := col("Capital exact"), col("Edit distance"), col("Broken pattern")
	if len(got.Rows) != 3 {
		t.Fatalf("rows %q", got.Rows)
	}
	var order []string
	for _, r := range got.Rows {
		order = append(order, r[country])
	}
	if strings.Join(order, ",") != "France,Spain,Italy" {
		t.Errorf("rows in the order %q, want the testset's France,Spain,Italy", order)
	}
	if output+1 != expected && expected+1 != output {
		t.Errorf("the expected answer (column %d) is not beside the output (column %d): %q", expected, output, got.Headers)
	}
	for i, want := range []struct{ exact, lev string }{{"✓", "0"}, {"✓", "0"}, {"✗", "10"}} {
		r := got.Rows[i]
		if !strings.HasPrefix(r[exact], want.exact) {
			t.Errorf("row %d (%s): Capital exact reads %q, want %s", i, r[country], r[exact], want.exact)
		}
		if !strings.HasPrefix(r[lev], want.lev) {
			t.Errorf("row %d (%s): Edit distance reads %q, want the distance %s", i, r[country], r[lev], want.lev)
		}
		if !strings.Contains(r[broken], "Invalid regular expression") {
			t.Errorf("row %d: Broken pattern reads %q, want its error message", i, r[broken])
		}
		for _, c := range []int{exact, lev, broken} {
			if strings.Contains(r[c], "success") {
				t.Errorf("row %d: %s reads %q (the execution status, not the verdict)", i, got.Headers[c], r[c])
			}
		}
		if got.Links[i] < 4 {
			t.Errorf("row %d has %d trace links, want one per cell (4)", i, got.Links[i])
		}
	}
	if !got.Charts {
		t.Errorf("the charts are not in view beside the table")
	}
}

// checkCSV: the run's CSV export, read through the API, carries each
// testcase's columns, the application's output read from its trace and
// the expected answer beside it, with the evaluators' verdicts; the
// console's CSV link downloads the same file.
func checkCSV(t *testing.T, env *Env, u User, ctx context.Context) {
	t.Helper()
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname.split("/").pop()`))
	if err != nil {
		t.Fatal(err)
	}
	status, body := env.Platform.Do(t, "GET", "/api/evaluations/runs/"+id+"/export?format=csv", "ApiKey "+u.Key, nil)
	if status != http.StatusOK {
		t.Fatalf("CSV export: %d %s", status, body)
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil || len(rows) != 4 {
		t.Fatalf("CSV export: %v\n%s", err, body)
	}
	at := map[string]int{}
	for i, h := range rows[0] {
		at[h] = i
	}
	for _, h := range []string{"country", "echoer.output", "correct_answer", "em.success"} {
		if _, ok := at[h]; !ok {
			t.Fatalf("the CSV export has no column %q: %q", h, rows[0])
		}
	}
	if at["correct_answer"] != at["echoer.output"]+1 {
		t.Errorf("the expected answer is not beside the output: %q", rows[0])
	}
	got := map[string][]string{}
	for _, r := range rows[1:] {
		got[r[at["country"]]] = []string{r[at["echoer.output"]], r[at["correct_answer"]], r[at["em.success"]]}
	}
	want := map[string][]string{"France": {"echo: France", "echo: France", "1"}, "Spain": {"echo: Spain", "echo: Spain", "1"}, "Italy": {"echo: Italy", "Rome", "0"}}
	for c, w := range want {
		if strings.Join(got[c], "|") != strings.Join(w, "|") {
			t.Errorf("CSV row of %s: output, expected, verdict %q, want %q", c, got[c], w)
		}
	}
	// The page's CSV link, fetched as the browser downloads it (its
	// session cookie), gives the same file.
	page, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch([...document.querySelectorAll("a")].find(a => a.innerText === "CSV").href).then(r => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if page != string(body) {
		t.Errorf("the console's CSV download differs from the API's:\n%s\nvs\n%s", page, body)
	}
}

// checkRateLimitNotice: a run whose provider answers 429 above one call at
// once (asking for 2 s between tries) says on its page that its cells wait
// on the provider's rate limit, and still ends with every cell done.
func checkRateLimitNotice(t *testing.T, env *Env, ctx context.Context, key string) {
	t.Helper()
	llm := env.Platform.LLM
	llm.SetDelay(300 * time.Millisecond)
	llm.LimitConcurrency(1, 2*time.Second)
	defer func() { llm.LimitConcurrency(0, 0); llm.SetDelay(0) }()
	var rows []any
	for _, c := range []string{"Peru", "Chile", "Japan", "Kenya", "Nepal", "Fiji"} {
		rows = append(rows, map[string]any{"data": map[string]any{"country": c}})
	}
	ts := env.Platform.MustJSON(t, "POST", "/api/simple/testsets/", key, map[string]any{"testset": map[string]any{
		"slug": "busy", "name": "busy", "data": map[string]any{"testcases": rows}}})
	apps := env.Platform.MustJSON(t, "POST", "/api/simple/applications/query", key, map[string]any{})
	appRev := str(dig(apps, "applications", 0, "revision_id"))
	ev := env.Platform.MustJSON(t, "POST", "/api/simple/evaluations/", key, map[string]any{"evaluation": map[string]any{
		"name": "busy provider", "data": map[string]any{"testset_steps": []any{str(dig(ts, "testset", "revision_id"))},
			"application_steps": []any{appRev}, "concurrency": map[string]any{"batch_size": 6}}}})
	id := str(dig(ev, "evaluation", "id"))
	err := chromedp.Do(ctx,
		env.Visit("/console/evaluations/"+id),
		chromedp.WaitVisible(testID("rate-limit-wait")),
	)
	if err != nil {
		t.Fatalf("the run page never said it waits on the provider: %v; page:\n%s", err, pageText(t, ctx))
	}
	saveScreenshot(t, ctx, "rate-limited")
	if err := chromedp.Do(ctx, waitJS(`document.querySelector('[data-testid="run-status"]')?.innerText === "success"`)); err != nil {
		t.Errorf("the rate-limited run did not end a success: %v; page:\n%s", err, pageText(t, ctx))
	}
}
