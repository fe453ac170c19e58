package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/assayhq/assay/services/console/e2e"
)

// fill focuses the field matched by the CSS selector sel, selects what it holds and
// types text over it with Input.insertText (the input events React listens to).
// chromedp.SendKeys and Clear are not used: they read a node's attributes while DOM
// events update them, a data race go test -race reports.
func fill(sel, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Click(chromedp.CSS(sel)),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).select(), undefined`, sel)),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: text})
			return err
		}),
	)
}

// TestConsolePages drives the trace filters, a session thread, the analytics charts,
// an annotation queue worked with the keyboard and the provider secrets over one
// platform, each page against the real API.
func TestConsolePages(t *testing.T) {
	env := e2e.Shared(t)
	u := env.User(t, "pages@example.com")
	session := "sess-" + hexID(4)
	var tids []string
	for i := 0; i < 2; i++ {
		tid := hexID(16)
		spans, _ := ragTrace(tid)
		spans[0]["attributes"].(map[string]any)["ag"].(map[string]any)["session"] = map[string]any{"id": session}
		ingest(t, env, u.Key, tid, spans)
		tids = append(tids, tid)
	}
	other := hexID(16)
	ingest(t, env, u.Key, other, []map[string]any{span(other, hexID(8), "", "health-check", "task", time.Now().Add(-time.Minute), 5*time.Millisecond, nil)})

	t.Run("filters", func(t *testing.T) {
		ctx := env.SignedIn(t, u)
		rows := func(n int) chromedp.Action[chromedp.Void] {
			return chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelectorAll('tr[data-trace]').length === %d && !document.body.innerText.includes("Loading…")`, n))
		}
		if err := chromedp.Do(ctx,
			chromedp.Navigate(env.URL+"/console/traces"),
			rows(3),
			// A metric condition: tokens > 10 keeps the two RAG traces.
			chromedp.Click(`//button[text()="+ Filter"]`),
			selectValue(`select[aria-label="Filter on"]`, "metric"),
			selectValue(`select[aria-label="Metric"]`, "tokens.cumulative.total"),
			selectValue(`select[aria-label="Operator"]`, "gt"),
			fill(`input[aria-label="Value"]`, "10"),
			chromedp.Click(`//button[text()="Apply filters"]`),
			rows(2),
		); err != nil {
			t.Fatal(err)
		}
		e2e.Screenshot(t, ctx)
		// A bad value is refused on the page, naming the row, before any request.
		if err := chromedp.Do(ctx,
			fill(`input[aria-label="Value"]`, "many"),
			chromedp.Click(`//button[text()="Apply filters"]`),
			e2e.WaitText("gt takes a number"),
		); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("session", func(t *testing.T) {
		ctx := env.SignedIn(t, u)
		if err := chromedp.Do(ctx,
			chromedp.Navigate(env.URL+"/console/sessions"),
			e2e.WaitText(session),
			chromedp.Click(fmt.Sprintf(`//a[text()=%q]`, session)),
			chromedp.Poll[chromedp.Void](`document.querySelectorAll('[data-testid="session-thread"] > li').length === 2`),
			e2e.WaitText("What is Assay?"),
		); err != nil {
			t.Fatal(err)
		}
		e2e.Screenshot(t, ctx)
	})

	t.Run("analytics", func(t *testing.T) {
		ctx := env.SignedIn(t, u)
		if err := chromedp.Do(ctx,
			chromedp.Navigate(env.URL+"/console/analytics"),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="analytics-totals"]`)),
			chromedp.Poll[chromedp.Void](`document.querySelectorAll('.chart canvas').length === 4`),
		); err != nil {
			t.Fatal(err)
		}
		totals, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="analytics-totals"]`)))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(totals, "requests\n3") || !strings.Contains(totals, "tokens\n42") {
			t.Fatalf("totals: %q", totals)
		}
		e2e.Screenshot(t, ctx)
	})

	t.Run("queue", func(t *testing.T) {
		ev := env.Platform.MustJSON(t, "POST", "/api/simple/evaluators", u.Key, map[string]any{"evaluator": map[string]any{
			"slug": "helpful", "name": "Helpful",
			"data": map[string]any{"schemas": map[string]any{"outputs": map[string]any{
				"type": "object", "required": []any{"rating"},
				"properties": map[string]any{"rating": map[string]any{"type": "integer", "enum": []any{1, 2, 3}}, "note": map[string]any{"type": "string"}},
			}}},
		}})
		rev := ev["evaluator"].(map[string]any)["revision_id"].(string)
		q := env.Platform.MustJSON(t, "POST", "/api/simple/queues", u.Key, map[string]any{"queue": map[string]any{
			"name": "review answers", "data": map[string]any{"kind": "traces", "evaluators": []any{rev}}}})
		qid := q["queue"].(map[string]any)["id"].(string)
		env.Platform.MustJSON(t, "POST", "/api/simple/queues/"+qid+"/traces", u.Key, map[string]any{"trace_ids": tids})
		ctx := env.SignedIn(t, u)
		if err := chromedp.Do(ctx,
			chromedp.Navigate(env.URL+"/console/queues"),
			e2e.WaitText("review answers"),
			chromedp.Click(`//a[text()="review answers"]`),
			e2e.WaitText("0 / 2 done"),
			chromedp.WaitVisible(chromedp.CSS(`#root_rating`)),
			e2e.WaitText("What is Assay?"),
			// 3 picks the third rating, ctrl+enter submits and moves on.
			chromedp.KeyEvent("3"),
			chromedp.Poll[chromedp.Void](`document.querySelector('#root_rating').value !== "" && document.querySelector('#root_rating').selectedIndex > 0`),
		); err != nil {
			t.Fatal(err)
		}
		e2e.Screenshot(t, ctx)
		if err := chromedp.Do(ctx,
			chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur(), undefined`),
			chromedp.Evaluate[chromedp.Void](`document.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", ctrlKey: true, bubbles: true})), undefined`),
			e2e.WaitText("1 / 2 done"),
			e2e.WaitText("Scenario 2 of 2"),
			chromedp.Evaluate[chromedp.Void](`document.dispatchEvent(new KeyboardEvent("keydown", {key: "k", bubbles: true})), undefined`),
			e2e.WaitText("Scenario 1 of 2"),
		); err != nil {
			t.Fatal(err)
		}
		// Annotations are written through the span stream: readable shortly after.
		var res map[string]any
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(300 * time.Millisecond) {
			res = env.Platform.MustJSON(t, "POST", "/api/annotations/query", u.Key, map[string]any{"annotation": map[string]any{"references": map[string]any{"evaluator": map[string]any{"slug": "helpful"}}}})
			if n, _ := res["count"].(float64); n >= 1 || time.Now().After(deadline) {
				break
			}
		}
		if n, _ := res["count"].(float64); n != 1 {
			t.Fatalf("queue annotations: %v", res)
		}
		if out := res["annotations"].([]any)[0].(map[string]any)["data"].(map[string]any)["outputs"].(map[string]any); out["rating"] != 3.0 {
			t.Fatalf("queue annotation outputs: %v", out)
		}
	})

	t.Run("secrets", func(t *testing.T) {
		ctx := env.SignedIn(t, u)
		if err := chromedp.Do(ctx,
			chromedp.Navigate(env.URL+"/console/settings/secrets"),
			chromedp.WaitVisible(chromedp.CSS(`input[aria-label="Provider key"]`)),
			fill(`input[aria-label="Secret name"]`, "team openai"),
			fill(`input[aria-label="Provider key"]`, "sk-e2e-never-shown-0123456789"),
			chromedp.Click(`//button[text()="Add secret"]`),
			chromedp.WaitVisible(`//td[text()="team openai"]`),
		); err != nil {
			t.Fatal(err)
		}
		html, err := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS(`html`)))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(html, "sk-e2e-never-shown") {
			t.Fatal("the secret's key is on the page after saving")
		}
		// A custom provider too. Saved, the form starts empty again: values
		// left in it read as not saved, and a second click would add a
		// duplicate.
		if err := chromedp.Do(ctx,
			chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector('select[aria-label="Secret kind"]');
				Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, "value").set.call(s, "custom_provider");
				s.dispatchEvent(new Event("change", {bubbles: true})); })(), undefined`),
			chromedp.WaitVisible(chromedp.CSS(`input[aria-label="Provider URL"]`)),
			fill(`input[aria-label="Provider URL"]`, env.Platform.LLM.URL),
			fill(`input[aria-label="Provider slug"]`, "local"),
			fill(`input[aria-label="Models"]`, "llama-local"),
			chromedp.Click(`//button[text()="Add secret"]`),
			chromedp.WaitVisible(`//td[contains(., "llama-local")]`),
		); err != nil {
			t.Fatal(err)
		}
		left, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('form[aria-label="Add a secret"] input')].map(i => i.value).filter(v => v !== "")`))
		if err != nil {
			t.Fatal(err)
		}
		if len(left) != 0 {
			t.Errorf("the form keeps %q after Add secret", left)
		}
		// Edit: rename, the key field left empty keeps the stored key (the
		// update sends none).
		if err := chromedp.Do(ctx,
			chromedp.Evaluate[chromedp.Void](`window.__puts = [], window.__fetch = window.fetch, window.fetch = (u, o) => { if (o && o.method === "PUT") window.__puts.push(String(o.body)); return window.__fetch(u, o); }, undefined`),
			chromedp.Click(chromedp.CSS(`button[aria-label="Edit openai"]`)),
			chromedp.WaitVisible(chromedp.CSS(`form[aria-label="Edit a secret"]`)),
			fill(`input[aria-label="Secret name"]`, "team openai (prod)"),
			chromedp.Click(`//button[text()="Save secret"]`),
			chromedp.WaitVisible(`//td[text()="team openai (prod)"]`),
			chromedp.WaitVisible(chromedp.CSS(`form[aria-label="Add a secret"]`)),
		); err != nil {
			t.Fatal(err)
		}
		puts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__puts`))
		if err != nil {
			t.Fatal(err)
		}
		if len(puts) != 1 || strings.Contains(puts[0], `"key"`) {
			t.Errorf("the update sent %q, want one PUT without a key", puts)
		}
		if status, body := env.Platform.Do(t, "GET", "/api/secrets/openai", "ApiKey "+u.Key, nil); status != http.StatusOK || !strings.Contains(string(body), "team openai (prod)") {
			t.Errorf("the secret after the edit: %d %s", status, body)
		}
		e2e.Screenshot(t, ctx)
		if err := chromedp.Do(ctx,
			chromedp.Evaluate[chromedp.Void](`window.confirm = () => true, undefined`),
			chromedp.Click(chromedp.CSS(`button[aria-label="Delete openai"]`)),
			chromedp.Poll[chromedp.Void](`!document.querySelector('[data-testid="secrets"]').innerText.includes("team openai")`),
			chromedp.Click(chromedp.CSS(`button[aria-label^="Delete "]`)),
			chromedp.Poll[chromedp.Void](`!document.querySelector('[data-testid="secrets"]').innerText.includes("llama-local")`),
		); err != nil {
			t.Fatal(err)
		}
		if status, body := env.Platform.Do(t, "GET", "/api/secrets", "ApiKey "+u.Key, nil); status != http.StatusOK || strings.TrimSpace(string(body)) != "[]" {
			t.Fatalf("secrets after delete: %d %s", status, body)
		}
	})
}
