package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestCreateAndRevokeKey: in settings, a key is created and shown once; it
// works against the API; revoked from the same page, it stops working.
func TestCreateAndRevokeKey(t *testing.T) {
	env := Start(t)
	erin := env.User(t, "erin@example.com")
	ctx := env.SignedIn(t, erin)
	AcceptDialogs(t, ctx)

	if err := chromedp.Do(ctx, env.Visit("/console/settings/keys"), WaitText("API keys of Default"),
		chromedp.SendKeys(chromedp.CSS(`input[aria-label="Key name"]`), "ci-pipeline"),
		ClickText("Create key"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=new-key-value]`))); err != nil {
		t.Fatal(err)
	}
	key, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid=new-key-value]`)))
	if err != nil {
		t.Fatal(err)
	}
	key = strings.TrimSpace(key)
	Screenshot(t, ctx)
	status, body := env.Platform.Do(t, "GET", "/api/keys", "ApiKey "+key, nil)
	if status != http.StatusOK || !strings.Contains(string(body), `"ci-pipeline"`) {
		t.Fatalf("the new key against the API: %d %s", status, body)
	}
	prefix, _, _ := strings.Cut(key, ".")

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`button[aria-label="Revoke ci-pipeline"]`)),
		chromedp.Poll[chromedp.Void](`!document.querySelector('tr[data-key="`+prefix+`"]')`)); err != nil {
		t.Fatal(err)
	}
	status, body = env.Platform.Do(t, "GET", "/api/keys", "ApiKey "+key, nil)
	if status != http.StatusUnauthorized {
		t.Errorf("the revoked key against the API: %d %s, want 401", status, body)
	}
}
