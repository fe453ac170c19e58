package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestTestsetUpload: a CSV the server refuses shows its error at the line
// it names; a good one is uploaded from the testsets page under the name
// "Capitals QA" (its slug is capitals-qa, for the CLI), its rows show in
// the grid and its history is one version saying what was uploaded; an
// edited cell and an added column are committed as a new revision that the
// API then serves, and the diff of the two versions names the changed row
// and reports the column once. A 1,200-row testset shows its row numbers
// whole.
func TestTestsetUpload(t *testing.T) {
	env := Shared(t)
	u := env.User(t, "testsets@example.com")
	ctx := env.SignedIn(t, u)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	good := filepath.Join(dir, "capitals.csv")
	if err := os.WriteFile(bad, []byte("country,correct_answer\nFrance,Paris\nSpain,Madrid,extra\nItaly,Rome\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(good, []byte("country,correct_answer\nFrance,Paris\n\"Spain, Kingdom of\",Madrid\nItaly,Rome\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	err := chromedp.Do(ctx,
		env.Visit("/console/testsets"),
		WaitText("Upload a testset"),
		chromedp.SetUploadFiles(testID("upload-file"), []string{bad}),
		WaitText("Spain"), // the preview
		chromedp.Click(testID("upload-send")),
		WaitText("The server refused the file"),
	)
	if err != nil {
		t.Fatal(err)
	}
	// The server names line 3; the page shows that line of the file, marked.
	marked, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const el = document.querySelector('[data-testid="error-lines"] [data-line="3"]');
		return el && getComputedStyle(el).fontWeight === "700" ? el.textContent : "";
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(marked, "Spain,Madrid,extra") {
		t.Fatalf("line 3 not shown marked; got %q; page:\n%s", marked, pageText(t, ctx))
	}
	if txt := pageText(t, ctx); !strings.Contains(txt, "line 3") {
		t.Errorf("the server's message naming line 3 is not shown:\n%s", txt)
	}

	err = chromedp.Do(ctx,
		chromedp.SetUploadFiles(testID("upload-file"), []string{good}),
		WaitText("Spain, Kingdom of"),
		fillText(byLabel("testset name"), "Capitals QA"),
		chromedp.Click(testID("upload-send")),
		chromedp.WaitVisible(testID("testset-grid")),
		WaitText("3 rows"),
		WaitText("Rome"),
		// One upload, one version, saying what it was.
		waitJS(`document.querySelectorAll('[data-testid="history"] tbody tr').length === 1`),
		WaitText("Uploaded capitals.csv (3 rows)"),
		chromedp.WaitVisible(chromedp.Search(`//h1[normalize-space(.)="Capitals QA"]`)),
		WaitText("assay testsets pull capitals-qa"),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	if txt := pageText(t, ctx); strings.Contains(txt, "Initial commit") {
		t.Errorf("the history shows the create's empty v0:\n%s", txt)
	}
	saveScreenshot(t, ctx, "uploaded")
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	id := loc[strings.LastIndex(loc, "/")+1:]
	ts := env.Platform.MustJSON(t, "GET", "/api/testsets/"+id, u.Key, nil)
	if got := str(dig(ts, "testset", "slug")); got != "capitals-qa" {
		t.Errorf("the testset named Capitals QA has the slug %q, want capitals-qa", got)
	}

	// Edit the cell "Rome", add an empty column, commit with a message.
	err = chromedp.Do(ctx,
		chromedp.DoubleClick(chromedp.CSS(`[data-row="2"] [title="Rome"]`)),
		chromedp.WaitVisible(byLabel("edit correct_answer of row 3")),
		fillText(byLabel("edit correct_answer of row 3"), "Roma"),
		// Typing into the column field blurs the cell, which ends its edit.
		Type(string(byLabel("new column name")), "notes"),
		WaitText("1 edited rows"),
		ClickText("Add column"),
		WaitText("1 column changes"),
		Type(string(byLabel("commit message")), "Italian spelling"),
		chromedp.Click(testID("commit")),
		WaitText("Committed version 2."),
		// the new revision is shown: no pending edit, two versions
		waitJS(`!document.querySelector('[data-testid="pending"]') && document.querySelectorAll('[data-testid="history"] tbody tr').length === 2`),
		WaitText("Version 2 · 3 rows · Italian spelling"),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	Screenshot(t, ctx)

	// The diff of the two versions: the column once, the row by its name.
	err = chromedp.Do(ctx,
		chromedp.Click(byLabel("pick version 1")),
		chromedp.Click(byLabel("pick version 2")),
		ClickText("Diff the two picked versions"),
		chromedp.WaitVisible(testID("diff-summary")),
		WaitText("1 column added (notes); 0 added, 0 removed, 1 changed, 2 unchanged rows"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="diff"]').scrollIntoView()`),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	changed, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="diff-changed"]').innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(changed, "row 3 · Italy") || !strings.Contains(changed, "Roma") || strings.Contains(changed, "notes") {
		t.Errorf("the changed rows do not name Italy's row with its one changed cell:\n%s", changed)
	}
	saveScreenshot(t, ctx, "diff")

	rev := env.Platform.MustJSON(t, "POST", "/api/testsets/revisions/retrieve", u.Key, map[string]any{"testset_ref": map[string]any{"id": id}})
	if got := str(dig(rev, "testset_revision", "message")); got != "Italian spelling" {
		t.Errorf("latest revision message %q", got)
	}
	var answers []string
	for i := 0; i < 3; i++ {
		answers = append(answers, str(dig(rev, "testset_revision", "data", "testcases", i, "data", "correct_answer")))
	}
	if fmt.Sprint(answers) != "[Paris Madrid Roma]" {
		t.Errorf("committed answers %v, want [Paris Madrid Roma]", answers)
	}

	// 1,200 rows: the last row's number fits its cell.
	var big strings.Builder
	big.WriteString("country,correct_answer\n")
	for i := 0; i < 1200; i++ {
		fmt.Fprintf(&big, "Country %d,Capital %d\n", i, i)
	}
	bigID := apiUpload(t, env, u.Key, "many", "csv", []byte(big.String()))
	err = chromedp.Do(ctx,
		env.Visit("/console/testsets/"+bigID),
		WaitText("1200 rows"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="grid-scroller"]').scrollTop = 1e9`),
		chromedp.WaitVisible(chromedp.CSS(`[data-row="1199"]`)),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-row="1199"]').scrollIntoView({block: "end"})`),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	cut, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const el = document.querySelector('[data-row="1199"] .tsg-num');
		return el.scrollWidth > el.clientWidth ? "cut: " + el.textContent + " " + el.scrollWidth + ">" + el.clientWidth : "";
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if cut != "" {
		t.Errorf("the # cell of row 1200 is %s", cut)
	}
	saveScreenshot(t, ctx, "1200rows")
}

// TestTestsetGridScroll100k: a 100,000-row testset (uploaded through the
// API) opens in the grid, which keeps only a window of rows in the DOM
// while a script scrolls it from top to bottom, one step per animation
// frame. The frame deltas are logged (dropped frames: deltas over 1.5
// frame periods); the test fails only on what is not timing: the DOM
// window and reaching the last row.
func TestTestsetGridScroll100k(t *testing.T) {
	env := Shared(t)
	u := env.User(t, "grid@example.com")
	const n = 100_000
	var b strings.Builder
	b.WriteString("id,question,answer\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%d,what is %d plus %d?,%d\n", i, i, i, 2*i)
	}
	start := time.Now()
	id := apiUpload(t, env, u.Key, "big", "csv", []byte(b.String()))
	t.Logf("upload of %d rows (%d bytes) through the API: %v", n, b.Len(), time.Since(start).Round(time.Millisecond))

	ctx := env.SignedIn(t, u)
	start = time.Now()
	err := chromedp.Do(ctx,
		env.Visit("/console/testsets/"+id),
		chromedp.WaitVisible(chromedp.CSS(`[data-row="0"]`)),
		WaitText(fmt.Sprintf("%d rows", n)),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("grid of %d rows shown in %v (revision read and rendered)", n, time.Since(start).Round(time.Millisecond))

	type scroll struct {
		Idle       []float64 `json:"idle"`
		Fast       []float64 `json:"fast"`
		Slow       []float64 `json:"slow"`
		MaxRows    int       `json:"maxRows"`
		LastShown  bool      `json:"lastShown"`
		ScrollTop  float64   `json:"scrollTop"`
		Total      float64   `json:"total"`
		DurationMs float64   `json:"durationMs"`
	}
	// 60 frames of the idle page: the browser's own frame period on this
	// machine (headless, software compositing, shared cores). Then 600
	// frames from top to bottom, about 5,300 px (166 rows) a frame, far
	// faster than a user drags, so every frame brings all-new rows; then
	// 300 frames back up at 96 px (3 rows) a frame, a quick flick.
	res, err := chromedp.Run(ctx, chromedp.Evaluate[scroll](`new Promise((resolve) => {
		const el = document.querySelector('[data-testid="grid-scroller"]');
		const total = el.scrollHeight - el.clientHeight;
		const out = {idle: [], fast: [], slow: [], maxRows: 0};
		const frames = (n, at, into, done) => {
			let last = 0, i = 0;
			const tick = (now) => {
				if (last) into.push(now - last);
				last = now;
				out.maxRows = Math.max(out.maxRows, el.querySelectorAll('[data-row]').length);
				if (i++ < n) { if (at) el.scrollTop = at(i); requestAnimationFrame(tick); return; }
				done();
			};
			requestAnimationFrame(tick);
		};
		frames(60, null, out.idle, () => {
			const t0 = performance.now();
			frames(600, (i) => Math.min(total, i * total / 600), out.fast, () => {
				out.durationMs = performance.now() - t0;
				out.lastShown = !!el.querySelector('[data-row="`+fmt.Sprint(n-1)+`"]');
				out.scrollTop = el.scrollTop; out.total = total;
				frames(300, (i) => total - i * 96, out.slow, () => resolve(out));
			});
		});
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	Screenshot(t, ctx)
	if len(res.Fast) == 0 || len(res.Slow) == 0 || len(res.Idle) == 0 {
		t.Fatal("no frame measured")
	}
	// A frame is dropped when a delta spans more than 1.5 idle periods:
	// round(delta / period) - 1 frames were missed.
	period := median(res.Idle)
	report := func(name string, deltas []float64) {
		dropped, worst := 0, 0.0
		for _, d := range deltas {
			if d > 1.5*period {
				dropped += int(d/period+0.5) - 1
			}
			worst = max(worst, d)
		}
		t.Logf("%s: %d frames, median %.1f ms, worst %.1f ms; dropped frames %d (%.1f%% of %d at the idle period %.1f ms)",
			name, len(deltas), median(deltas), worst, dropped, 100*float64(dropped)/float64(dropped+len(deltas)), dropped+len(deltas), period)
	}
	t.Logf("scroll of %d rows top to bottom in %.0f ms; at most %d rows in the DOM", n, res.DurationMs, res.MaxRows)
	report("166 rows a frame (top to bottom)", res.Fast)
	report("3 rows a frame (a flick back up)", res.Slow)
	if res.MaxRows == 0 || res.MaxRows > 200 {
		t.Errorf("the grid kept %d rows in the DOM while scrolling; want a window (under 200)", res.MaxRows)
	}
	if !res.LastShown {
		t.Errorf("the last row is not shown at the bottom (scrollTop %.0f of %.0f)", res.ScrollTop, res.Total)
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
