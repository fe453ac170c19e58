package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// resultsScenarios is the size of the run BenchmarkResultsPage opens:
// 5,000 scenarios by default (the results page's target), fewer or more
// with ASSAY_E2E_RESULTS_SCENARIOS (a benchmark knob, not a service
// setting).
func resultsScenarios(t testing.TB) int {
	if v := os.Getenv("ASSAY_E2E_RESULTS_SCENARIOS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("ASSAY_E2E_RESULTS_SCENARIOS=%q: want a positive count", v)
		}
		return n
	}
	return 5000
}

// seedResultsRun writes, through the API's bulk routes, a finished run of n
// scenarios over a testset of n capitals: a testset → application →
// evaluator run whose every third answer is wrong, with each scenario's
// results (a trace id per cell) and its evaluator's verdict as a metric.
// It returns the run's id.
func seedResultsRun(t testing.TB, env *Env, key string, n int) string {
	t.Helper()
	p := env.Platform
	var csv strings.Builder
	csv.WriteString("country,correct_answer\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&csv, "country %d,capital %d\n", i, i)
	}
	start := time.Now()
	tsID := apiUpload(t, env, key, "capitals-large", "csv", []byte(csv.String()))
	t.Logf("seed: testset of %d rows uploaded in %v", n, time.Since(start).Round(time.Millisecond))
	var rev struct {
		Revision struct {
			ID   string `json:"id"`
			Data struct {
				Testcases []struct {
					ID string `json:"id"`
				} `json:"testcases"`
			} `json:"data"`
		} `json:"testset_revision"`
	}
	callJSON(t, env, key, "/api/testsets/revisions/retrieve", map[string]any{"testset_ref": map[string]any{"id": tsID}, "include_testcases": true}, &rev)
	if len(rev.Revision.Data.Testcases) != n {
		t.Fatalf("the testset has %d testcases, want %d", len(rev.Revision.Data.Testcases), n)
	}
	var ev struct {
		Evaluator struct {
			ID string `json:"id"`
		} `json:"evaluator"`
	}
	callJSON(t, env, key, "/api/simple/evaluators/", map[string]any{"evaluator": map[string]any{
		"slug": "exact", "name": "Capital exact",
		"data": map[string]any{"uri": "agenta:builtin:auto_exact_match:v0", "parameters": map[string]any{"correct_answer_key": "correct_answer"}},
	}}, &ev)
	var runs struct {
		Runs []struct {
			ID string `json:"id"`
		} `json:"runs"`
	}
	callJSON(t, env, key, "/api/evaluations/runs", map[string]any{"runs": []any{map[string]any{"name": "capitals, large", "data": map[string]any{"steps": []any{
		map[string]any{"key": "testset-large", "type": "input", "origin": "auto", "references": map[string]any{"testset_revision": map[string]any{"id": rev.Revision.ID}}},
		map[string]any{"key": "application-large", "type": "invocation", "origin": "auto"},
		map[string]any{"key": "evaluator-exact", "type": "annotation", "origin": "auto", "references": map[string]any{"evaluator": map[string]any{"id": ev.Evaluator.ID}}},
	}}}}}, &runs)
	run := runs.Runs[0].ID
	scenarios := make([]any, n)
	for i := range scenarios {
		scenarios[i] = map[string]any{"run_id": run, "status": "success"}
	}
	var sc struct {
		Scenarios []struct {
			ID string `json:"id"`
		} `json:"scenarios"`
	}
	callJSON(t, env, key, "/api/evaluations/scenarios", map[string]any{"scenarios": scenarios}, &sc)
	if len(sc.Scenarios) != n {
		t.Fatalf("%d scenarios made, want %d", len(sc.Scenarios), n)
	}
	// A write takes at most 10,000 records: results in batches of 3,000
	// scenarios (9,000 results).
	trace := func(i, step int) string { return fmt.Sprintf("%024x%08x", step+1, i) }
	for lo := 0; lo < n; lo += 3000 {
		var results, metrics []any
		for i := lo; i < min(n, lo+3000); i++ {
			s := sc.Scenarios[i].ID
			results = append(results,
				map[string]any{"run_id": run, "scenario_id": s, "step_key": "testset-large", "status": "success", "testcase_id": rev.Revision.Data.Testcases[i].ID},
				map[string]any{"run_id": run, "scenario_id": s, "step_key": "application-large", "status": "success", "trace_id": trace(i, 1)},
				map[string]any{"run_id": run, "scenario_id": s, "step_key": "evaluator-exact", "status": "success", "trace_id": trace(i, 2)})
			metrics = append(metrics, map[string]any{"run_id": run, "scenario_id": s, "status": "success", "data": map[string]any{
				"evaluator-exact": map[string]any{"attributes.ag.data.outputs.success": map[string]any{"type": "binary", "count": 1,
					"freq": []any{map[string]any{"value": i%3 != 2, "count": 1, "density": 1}}}}}})
		}
		p.MustJSON(t, "POST", "/api/evaluations/results", key, map[string]any{"results": results})
		p.MustJSON(t, "POST", "/api/evaluations/metrics", key, map[string]any{"metrics": metrics})
	}
	t.Logf("seed: scenarios, results and metrics written at %v", time.Since(start).Round(time.Millisecond))
	p.MustJSON(t, "POST", "/api/evaluations/runs/"+run+"/close/success", key, nil)
	return run
}

// callJSON sends body to path with the API key and decodes the 200
// answer into out.
func callJSON(t testing.TB, env *Env, key, path string, body, out any) {
	t.Helper()
	status, b := env.Platform.Do(t, "POST", path, "ApiKey "+key, body)
	if status != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, status, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("POST %s: %v: %s", path, err, b)
	}
}

// BenchmarkResultsPage measures the results page of a 5,000-scenario
// run (ASSAY_E2E_RESULTS_SCENARIOS for another size) seeded through the
// API's bulk routes: the time to its first rows with their verdicts, to
// all its rows read, and its frame periods while scrolling (the figures
// are in the log; docs/benchmarks.md reports them). A benchmark, not a
// test, since the seeding alone takes tens of seconds; TestEvaluationRun
// checks the same page on a smaller run.
//
//	go test -run '^$' -bench BenchmarkResultsPage -benchtime 1x -v ./services/console/e2e/
func BenchmarkResultsPage(b *testing.B) {
	env := Start(b)
	u := env.User(b, "results-large@example.com")
	for i := 0; i < b.N; i++ {
		measureResultsPage(b, env, u, resultsScenarios(b))
	}
}

// measureResultsPage seeds a run of n scenarios, opens its results page
// twice and scrolls it top to bottom; it logs the figures and fails only
// on what is not timing: the rows in the DOM (a window, not all of
// them), the verdicts shown, the last row reached.
func measureResultsPage(t testing.TB, env *Env, u User, n int) {
	t.Helper()
	start := time.Now()
	run := seedResultsRun(t, env, u.Key, n)
	t.Logf("seeded a run of %d scenarios through the API in %v", n, time.Since(start).Round(time.Millisecond))

	// The server's part: the time to the export's first row (what the
	// page waits for before its first rows), and to its end.
	for i := 0; i < 2; i++ {
		at := time.Now()
		req, err := http.NewRequest("GET", env.URL+"/api/evaluations/runs/"+run+"/export?format=json", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "ApiKey "+u.Key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusOK {
			res.Body.Close()
			t.Fatalf("export: %s", res.Status)
		}
		rd := bufio.NewReader(res.Body)
		var first time.Duration
		size := 0
		for lines := 0; ; lines++ {
			line, err := rd.ReadString('\n')
			size += len(line)
			if lines == 1 {
				first = time.Since(at) // the line after the header's is the first row
			}
			if err != nil {
				break
			}
		}
		res.Body.Close()
		t.Logf("the run's JSON export (%d KB): first row at %v, read in %v", size/1024, first.Round(time.Millisecond), time.Since(at).Round(time.Millisecond))
	}

	ctx := env.SignedIn(t, u)
	type shown struct {
		Rows     int     `json:"rows"`
		At       float64 `json:"at"`
		Verdicts int     `json:"verdicts"`
		All      float64 `json:"all"`
	}
	// Interactive: the first poll (every animation frame) that sees the
	// table's first rows with their verdicts, in ms from the
	// navigation's start; then the time all the scenarios were read (the
	// count shows them all, nothing left to read).
	open := func() shown {
		if err := chromedp.Do(ctx, env.Visit("/console/evaluations/"+run)); err != nil {
			t.Fatal(err)
		}
		got, err := chromedp.Run(ctx, chromedp.Poll[shown](`(() => {
			const rows = document.querySelectorAll('[data-testid="result-row"]');
			const verdicts = document.querySelectorAll('[data-testid="result-row"] [data-testid="verdict"]').length;
			if (!rows.length || !verdicts) return false;
			return {rows: rows.length, at: performance.now(), verdicts};
		})()`, chromedp.WithPollingTimeout(60*time.Second)))
		if err != nil {
			t.Fatalf("the results of %d scenarios are not shown: %v", n, err)
		}
		all, err := chromedp.Run(ctx, chromedp.Poll[float64](fmt.Sprintf(`(() => {
			const count = document.querySelector('[data-testid="results-count"]');
			if (!count || !count.innerText.startsWith("%d of %d") || document.body.innerText.includes("reading the rest")) return false;
			return performance.now();
		})()`, n, n), chromedp.WithPollingTimeout(60*time.Second)))
		if err != nil {
			t.Fatalf("the %d scenarios are not all read: %v", n, err)
		}
		got.All = all
		return got
	}
	// The API calls the page made, by their duration: where the time to
	// the first rows goes.
	calls := func() string {
		out, err := chromedp.Run(ctx, chromedp.Evaluate[string](`performance.getEntriesByType("resource").filter(e => e.name.includes("/api/"))
			.map(e => e.name.replace(location.origin, "").slice(0, 60) + " " + Math.round(e.startTime) + "+" + Math.round(e.duration) + "ms (first byte +" + Math.round(e.responseStart - e.startTime) + "ms) " + Math.round(e.encodedBodySize / 1024) + "KB").join("; ")`))
		if err != nil {
			return err.Error()
		}
		return out
	}
	first := open()
	t.Logf("API calls of the first visit: %s", calls())
	again := open()
	t.Logf("API calls of the second visit: %s", calls())
	t.Logf("results page of %d scenarios: first rows with verdicts at %.0f ms, all read at %.0f ms; again %.0f ms, %.0f ms (from the navigation's start); %d rows in the DOM",
		n, first.At, first.All, again.At, again.All, again.Rows)
	if again.Rows > 200 {
		t.Errorf("%d rows in the DOM for %d scenarios; want a window (under 200)", again.Rows, n)
	}

	type scroll struct {
		Idle      []float64 `json:"idle"`
		Drag      []float64 `json:"drag"`
		MaxRows   int       `json:"maxRows"`
		LastShown bool      `json:"lastShown"`
		LastText  string    `json:"lastText"`
	}
	// 60 idle frames (the browser's own frame period here), then 300
	// frames top to bottom (about 17 rows a frame).
	res, err := chromedp.Run(ctx, chromedp.Evaluate[scroll](`new Promise((resolve) => {
		const el = document.querySelector('[data-testid="results-scroll"]');
		const total = el.scrollHeight - el.clientHeight;
		const out = {idle: [], drag: [], maxRows: 0};
		const frames = (n, at, into, done) => {
			let last = 0, i = 0;
			const tick = (now) => {
				if (last) into.push(now - last);
				last = now;
				out.maxRows = Math.max(out.maxRows, el.querySelectorAll('[data-testid="result-row"]').length);
				if (i++ < n) { if (at) el.scrollTop = at(i); requestAnimationFrame(tick); return; }
				done();
			};
			requestAnimationFrame(tick);
		};
		frames(60, null, out.idle, () => frames(300, (i) => Math.min(total, i * total / 300), out.drag, () => {
			setTimeout(() => {
				const rows = [...el.querySelectorAll('[data-testid="result-row"]')];
				out.lastText = rows.length ? rows[rows.length - 1].innerText : "";
				out.lastShown = out.lastText.startsWith("`+strconv.Itoa(n)+`\t");
				resolve(out);
			}, 100);
		}));
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	saveScreenshot(t, ctx, fmt.Sprintf("%d-scenarios", n))
	if len(res.Idle) == 0 || len(res.Drag) == 0 {
		t.Fatal("no frame measured")
	}
	period := median(res.Idle)
	dropped, worst := 0, 0.0
	for _, d := range res.Drag {
		if d > 1.5*period {
			dropped += int(d/period+0.5) - 1
		}
		worst = max(worst, d)
	}
	t.Logf("scroll of %d rows top to bottom: %d frames, median %.1f ms, worst %.1f ms, dropped frames %d (idle period %.1f ms); at most %d rows in the DOM",
		n, len(res.Drag), median(res.Drag), worst, dropped, period, res.MaxRows)
	if res.MaxRows == 0 || res.MaxRows > 200 {
		t.Errorf("the table kept %d rows in the DOM while scrolling; want a window (under 200)", res.MaxRows)
	}
	if !res.LastShown {
		t.Errorf("the last row (#%d) is not shown at the bottom; the last row reads %q", n, res.LastText)
	}
	b, _ := json.Marshal(map[string]any{"scenarios": n, "first_ms": first.At, "first_all_ms": first.All, "again_ms": again.At, "again_all_ms": again.All, "scroll_median_ms": median(res.Drag), "dropped": dropped})
	t.Logf("figures: %s", b)
}
