package e2e_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/assayhq/assay/services/console/e2e"
)

// TestTeamSettings: an owner invites someone to the
// workspace from settings, sees the members of the project with their roles
// and finds both changes in the audit log, marked as made from the console.
func TestTeamSettings(t *testing.T) {
	env := e2e.Shared(t)
	u := env.User(t, "team-owner@example.com")
	ctx := env.SignedIn(t, u)
	if err := chromedp.Do(ctx,
		env.Visit("/console/settings/invitations"),
		chromedp.WaitVisible(chromedp.CSS(`input[aria-label="Email"]`)),
		e2e.Type(`input[aria-label="Email"]`, "invited@example.com"),
		chromedp.Click(`//form[@aria-label="Invite"]//button[@type="submit"]`),
		chromedp.WaitVisible(chromedp.CSS(`[role="status"] code.secret`)),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('[data-testid="invitations"] td')].some(td => td.innerText === "invited@example.com")`),
		e2e.WaitText("pending"),
	); err != nil {
		t.Fatal(err)
	}
	e2e.Screenshot(t, ctx)

	if err := chromedp.Do(ctx,
		env.Visit("/console/settings/members"),
		chromedp.WaitVisible(chromedp.CSS(`select[aria-label="Role of team-owner@example.com"]`)),
	); err != nil {
		t.Fatal(err)
	}
	role, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`select[aria-label="Role of team-owner@example.com"]`)))
	if err != nil {
		t.Fatal(err)
	}
	if role != "owner" {
		t.Fatalf("the owner's role reads %q", role)
	}

	if err := chromedp.Do(ctx,
		env.Visit("/console/settings/audit"),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('[data-testid="audit"] tbody tr')].some(tr =>
			tr.innerText.includes("/invitations") && tr.innerText.includes("console"))`),
	); err != nil {
		t.Fatal(err)
	}
	e2e.Screenshot(t, ctx)
}
