package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/assayhq/assay/services/console/e2e"
)

// TestCreateAndRevokeKey creates an API key on the settings page, uses the key shown
// once against the API, revokes it on the page and sees the API refuse it.
func TestCreateAndRevokeKey(t *testing.T) {
	env := e2e.Shared(t)
	u := env.User(t, "keys@example.com")
	ctx := env.SignedIn(t, u)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(env.URL+"/console/settings/keys"),
		chromedp.WaitVisible(chromedp.CSS(`input[aria-label="Key name"]`)),
		e2e.Type(`input[aria-label="Key name"]`, "e2e-ci"),
		chromedp.Click(`//button[text()="Create key"]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="new-key-value"]`)),
		e2e.WaitText("e2e-ci"),
	); err != nil {
		t.Fatal(err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="new-key-value"]`)))
	if err != nil {
		t.Fatal(err)
	}
	raw = strings.TrimSpace(raw)
	if status, body := env.Platform.Do(t, "GET", "/api/keys", "ApiKey "+raw, nil); status != http.StatusOK {
		t.Fatalf("the new key does not work: %d %s", status, body)
	}
	e2e.Screenshot(t, ctx)

	if err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`window.confirm = () => true, undefined`),
		chromedp.Click(chromedp.CSS(`button[aria-label="Revoke e2e-ci"]`)),
		chromedp.Poll[chromedp.Void](`!document.querySelector('button[aria-label="Revoke e2e-ci"]')`),
	); err != nil {
		t.Fatal(err)
	}
	if status, body := env.Platform.Do(t, "GET", "/api/keys", "ApiKey "+raw, nil); status != http.StatusUnauthorized {
		t.Fatalf("a revoked key still works: %d %s", status, body)
	}
}
