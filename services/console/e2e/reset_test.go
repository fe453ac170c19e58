package e2e

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestResetPasswordPage: the operator issues a one-time link for a user
// (no mail relay here); the user opens it, sets a new password, and signs
// in with it; the link does not work twice.
func TestResetPasswordPage(t *testing.T) {
	env := Shared(t)
	bob := env.User(t, "reset-bob@example.com")
	status, body := env.Platform.Do(t, "POST", "/api/admin/simple/accounts/users/"+bob.ID+"/password-reset", "Access "+AdminKey, nil)
	if status != http.StatusOK {
		t.Fatalf("issue a reset link: %d %s", status, body)
	}
	var issued struct {
		ResetURL string `json:"reset_url"`
	}
	if err := json.Unmarshal(body, &issued); err != nil {
		t.Fatal(err)
	}
	ctx := env.Browser(t)
	if err := chromedp.Do(ctx, env.Visit(issued.ResetURL), chromedp.WaitVisible(chromedp.CSS(`form[aria-label="Reset the password"] input[type=password]`)),
		Type(`form[aria-label="Reset the password"] input[type=password]`, "a brand new password"),
		chromedp.Click(chromedp.CSS(`form[aria-label="Reset the password"] button[type=submit]`)),
		WaitText("Your password is set.")); err != nil {
		t.Fatal(err)
	}
	Screenshot(t, ctx)
	if err := chromedp.Do(ctx, env.Visit("/console/signin"), signInForm(bob.Email, "a brand new password"), WaitText(bob.Email)); err != nil {
		t.Fatal(err)
	}
	// the same link a second time: the page shows the gateway's refusal
	ctx = env.Browser(t)
	if err := chromedp.Do(ctx, env.Visit(issued.ResetURL), chromedp.WaitVisible(chromedp.CSS(`form[aria-label="Reset the password"] input[type=password]`)),
		Type(`form[aria-label="Reset the password"] input[type=password]`, "yet another password"),
		chromedp.Click(chromedp.CSS(`form[aria-label="Reset the password"] button[type=submit]`)),
		WaitText("was used or has expired")); err != nil {
		t.Fatal(err)
	}
}
