package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// homeSteps are the getting-started steps of the home page, in order, as
// data-step attributes.
var homeSteps = []string{"provider", "testset", "application", "evaluator", "evaluation", "trace"}

// TestHomeTrafficAndRoles checks the home page, production traffic apart
// from evaluation traffic, and the gating of write controls by role, on one
// platform (each part with its own users), so CI starts it once.
func TestHomeTrafficAndRoles(t *testing.T) {
	env := Shared(t)
	t.Run("getting started", func(t *testing.T) { homeGettingStarted(t, env) })
	t.Run("production traffic by default", func(t *testing.T) { productionTrafficByDefault(t, env) })
	t.Run("viewer sees no write controls", func(t *testing.T) { viewerSeesNoWriteControls(t, env) })
}

// homeGettingStarted: a new account's home page lists every
// getting-started step as not done, each with a link that does it; after a
// testset is made through the API, the testset step reads done.
func homeGettingStarted(t *testing.T, env *Env) {
	u := env.User(t, "home@example.com")
	ctx := env.SignedIn(t, u)
	states := func() map[string]string {
		t.Helper()
		m, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`Object.fromEntries([...document.querySelectorAll('[data-step]')].map(e => [e.dataset.step, e.dataset.state]))`))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if err := chromedp.Do(ctx,
		env.Visit("/console/"),
		WaitText("Get started"),
		// Every step has read its state from the API.
		waitJS(`document.querySelectorAll('[data-step]').length === 6 && ![...document.querySelectorAll('[data-step]')].some(e => e.dataset.state === "loading")`),
	); err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	Screenshot(t, ctx)
	got := states()
	for _, s := range homeSteps {
		if got[s] != "todo" {
			t.Errorf("a new account's step %q reads %q, want todo (all: %v)", s, got[s], got)
		}
	}
	// Each step not done offers the page that does it.
	hrefs, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`Object.fromEntries([...document.querySelectorAll('[data-step]')].map(e => [e.dataset.step, e.querySelector('a')?.getAttribute('href') ?? ""]))`))
	if err != nil {
		t.Fatal(err)
	}
	for step, want := range map[string]string{"provider": "/console/settings/secrets", "testset": "/console/testsets", "application": "/console/apps",
		"evaluator": "/console/evaluators", "evaluation": "/console/evaluations", "trace": "/console/settings/keys"} {
		if !strings.HasPrefix(hrefs[step], want) {
			t.Errorf("step %q links to %q, want %s", step, hrefs[step], want)
		}
	}
	// The page no longer repeats the sidebar as its content.
	if txt := pageText(t, ctx); strings.Contains(txt, "Annotation queues\nSettings\nAnnotation queues") {
		t.Errorf("the home page repeats the navigation:\n%s", txt)
	}

	apiUpload(t, env, u.Key, "capitals", "json", []byte(`[{"country": "France", "correct_answer": "Paris"}]`))
	if err := chromedp.Do(ctx,
		env.Visit("/console/"),
		waitJS(`document.querySelector('[data-step="testset"]')?.dataset.state === "done"`),
		waitJS(`![...document.querySelectorAll('[data-step]')].some(e => e.dataset.state === "loading")`),
	); err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	got = states()
	for _, s := range homeSteps {
		want := "todo"
		if s == "testset" {
			want = "done"
		}
		if got[s] != want {
			t.Errorf("after a testset, step %q reads %q, want %s", s, got[s], want)
		}
	}
	if txt := pageText(t, ctx); !strings.Contains(txt, "1 of 6") {
		t.Errorf("the page does not count the steps done (want %q):\n%s", "1 of 6", txt)
	}
	Screenshot(t, ctx)
}
