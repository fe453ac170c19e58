package e2e_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/assayhq/assay/services/console/e2e"
)

// TestBranchVariant: from a revision on the application's page, a new
// variant is made under the name typed; the API finds it with the
// revision's prompt, and the page lists it.
func TestBranchVariant(t *testing.T) {
	env := e2e.Shared(t)
	u := env.User(t, "branch@example.com")
	app := env.Platform.MustJSON(t, "POST", "/api/simple/applications/", u.Key, map[string]any{"application": map[string]any{
		"slug": "capitals", "name": "capitals",
		"data": map[string]any{"uri": "agenta:builtin:completion:v0", "parameters": map[string]any{"prompt": map[string]any{
			"messages":        []any{map[string]any{"role": "user", "content": "Capital of {{country}}?"}},
			"template_format": "curly", "llm_config": map[string]any{"model": "gpt-4o-mini"}}}},
	}})
	appID := app["application"].(map[string]any)["id"].(string)

	ctx := env.SignedIn(t, u)
	if err := chromedp.Do(ctx,
		env.Visit("/console/apps/"+appID),
		chromedp.WaitVisible(chromedp.CSS(`button[aria-label="new variant from capitals v1"]`)),
		chromedp.Click(chromedp.CSS(`button[aria-label="new variant from capitals v1"]`)),
		chromedp.WaitVisible(chromedp.CSS(`input[aria-label="Variant name"]`)),
		e2e.Type(`input[aria-label="Variant name"]`, "Short answers"),
		e2e.ClickText("Create variant"),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('[role="status"]')].some(s => s.innerText.includes("Variant Short answers created from"))`),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('h3')].some(h => h.innerText === "Short answers")`),
	); err != nil {
		t.Fatal(err)
	}
	e2e.Screenshot(t, ctx)

	vs := env.Platform.MustJSON(t, "POST", "/api/applications/variants/query", u.Key, map[string]any{
		"application_refs": []any{map[string]any{"id": appID}}})
	vid := ""
	for _, v := range vs["application_variants"].([]any) {
		v := v.(map[string]any)
		if v["name"] == "Short answers" && v["slug"] == "short-answers" {
			vid = v["id"].(string)
		}
	}
	if vid == "" {
		t.Fatalf("no variant Short answers (short-answers): %v", vs)
	}
	log := env.Platform.MustJSON(t, "POST", "/api/applications/revisions/log", u.Key, map[string]any{
		"application_revisions": map[string]any{"application_variant_id": vid, "depth": 5}})
	b, _ := json.Marshal(log["application_revisions"])
	if !strings.Contains(string(b), "Capital of {{country}}?") {
		t.Fatalf("the new variant's revisions do not carry the prompt it was branched from: %s", b)
	}
}
