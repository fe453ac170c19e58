package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestPlaygroundRun: an application is created on the applications page
// from a name (its slug made from it),
// opened in the playground, run with a template variable through the
// runtime (the local model server as the provider) streamed as SSE and
// then as NDJSON, side by side with a second pane; an edited prompt is
// committed from the playground as a new revision; a chat application's
// playground holds a conversation (chatPlayground).
func TestPlaygroundRun(t *testing.T) {
	env := Start(t)
	u := env.User(t, "playground@example.com")
	ctx := env.SignedIn(t, u)
	err := chromedp.Do(ctx,
		env.Visit("/console/apps"),
		WaitText("New application"),
		waitJS(`(() => { const d = document.querySelector("details"); if (d) d.open = true; return !!d; })()`),
		chromedp.WaitVisible(byLabel("application name")),
		Type(string(byLabel("application name")), "Capitals QA"),
		waitJS(`document.querySelector('[data-testid="slug-preview"]')?.innerText.includes("capitals-qa")`),
		chromedp.Click(testID("create-app")),
		WaitText("Open in the playground"),
		chromedp.Click(chromedp.CSS(`a[href*="/playground?app="]`)),
		chromedp.WaitVisible(testID("playground-pane")),
		chromedp.WaitVisible(byLabel("variable country")),
		Type(string(byLabel("variable country")), "France"),
		chromedp.Click(testID("run-all")),
		waitJS(`document.querySelector('[data-testid="pane-output"]').innerText.includes("France")`),
		WaitText("trace "),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	out, err := chromedp.Run(ctx, chromedp.Text(testID("pane-output")))
	if err != nil {
		t.Fatal(err)
	}
	// The model server echoes the last user message.
	if want := "echo: What is the capital of France?"; strings.TrimSpace(out) != want {
		t.Errorf("SSE output %q, want %q", out, want)
	}
	reqs := env.Platform.LLM.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the model server got %d requests, want 1", len(reqs))
	}
	// The run's figures, read from its trace: latency, the tokens the
	// model server counted and a cost.
	err = chromedp.Do(ctx, waitJS(`(() => { const f = document.querySelector('[data-testid="pane-figures"]');
		return !!f && /latency \d/.test(f.innerText) && /\d+ tokens/.test(f.innerText) && /cost \$/.test(f.innerText); })()`))
	if err != nil {
		t.Fatalf("no latency, tokens and cost for the run: %v; page:\n%s", err, pageText(t, ctx))
	}
	// The stream format is wire detail: out of sight until asked for.
	hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const s = document.querySelector('[aria-label="stream format"]');
		return !s || !s.checkVisibility(); })() && !/SSE|NDJSON|event-stream/.test(document.body.innerText)`))
	if err != nil {
		t.Fatal(err)
	}
	if !hidden {
		t.Errorf("the playground shows the stream format (SSE / NDJSON) up front")
	}

	// A second pane; both run, streamed as NDJSON; the second pane's
	// prompt is edited first.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="playground-advanced"] summary`)),
		pickOption(byLabel("stream format"), "ndjson"),
		chromedp.Click(chromedp.Search(`//button[contains(., "Add a variant side by side")]`)),
		waitJS(`document.querySelectorAll('[data-testid="playground-pane"]').length === 2`),
		fillText(chromedp.CSS(`[data-testid="playground-pane"]:nth-child(2) [aria-label="message 2"]`), "Name the capital of {{country}}."),
		chromedp.Click(testID("run-all")),
		waitJS(`[...document.querySelectorAll('[data-testid="pane-output"]')].every(e => e.innerText.includes("France"))`),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	outs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="pane-output"]')].map(e => e.innerText.trim())`))
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 2 || outs[0] != "echo: What is the capital of France?" || outs[1] != "echo: Name the capital of France." {
		t.Errorf("NDJSON outputs side by side: %q", outs)
	}
	for _, r := range env.Platform.LLM.Requests() {
		if r.Body["stream"] != true {
			t.Errorf("a playground call did not stream from the provider: %+v", r)
		}
	}

	// Commit the second pane's prompt.
	err = chromedp.Do(ctx,
		Type(`[data-testid="playground-pane"]:nth-child(2) [aria-label="commit message"]`, "shorter question"),
		chromedp.Click(chromedp.CSS(`[data-testid="playground-pane"]:nth-child(2) [data-testid="pane-commit"]`)),
		WaitText("Committed v2."),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	// The variable values outlive a commit, and a look at the new revision
	// on the application's page and back: the next run uses them.
	country := func(when string) {
		t.Helper()
		val, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[aria-label="variable country"]')?.value ?? "(no field)"`))
		if err != nil {
			t.Fatal(err)
		}
		if val != "France" {
			t.Errorf("%s the variable country reads %q, want France", when, val)
		}
	}
	country("after a commit")
	Screenshot(t, ctx)
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.Search(`//a[text()="Revisions and environments"]`)),
		waitJS(`!location.pathname.endsWith("/playground")`),
		chromedp.NavigateBack(),
		chromedp.WaitVisible(byLabel("variable country")),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	country("back from the application's page")
	apps := env.Platform.MustJSON(t, "POST", "/api/applications/revisions/query", u.Key, map[string]any{})
	found := false
	for _, r := range dig(apps, "application_revisions").([]any) {
		if str(dig(r, "message")) == "shorter question" {
			found = true
			if got := str(dig(r, "data", "parameters", "prompt", "messages", 1, "content")); got != "Name the capital of {{country}}." {
				t.Errorf("committed user message %q", got)
			}
		}
	}
	if !found {
		t.Errorf("no revision with the commit message: %v", apps)
	}
	// The application was created from the name typed: its slug is made
	// from it (what the CLI and SDK call it), the name kept.
	list := env.Platform.MustJSON(t, "POST", "/api/simple/applications/query", u.Key, map[string]any{})
	if a := dig(list, "applications", 0); str(dig(a, "slug")) != "capitals-qa" || str(dig(a, "name")) != "Capitals QA" {
		t.Errorf("the application typed as \"Capitals QA\": %v", a)
	}

	t.Run("chat", func(t *testing.T) { chatPlayground(t, env, u, ctx) })
}
