package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// signInForm fills the sign-in page's form and submits it.
func signInForm(email, password string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.WaitVisible(chromedp.CSS(`input[name=email]`)),
		Type(`input[name=email]`, email),
		Type(`input[name=password]`, password),
		chromedp.Click(chromedp.CSS(`form[aria-label="Sign in"] button[type=submit]`)),
	)
}

// TestSignIn: a user provisioned with a password signs in through the
// page and lands on the console; a wrong password is told so and stays.
func TestSignIn(t *testing.T) {
	env := Shared(t)
	alice := env.User(t, "alice@example.com")

	t.Run("bad password", func(t *testing.T) {
		ctx := env.Browser(t)
		if err := chromedp.Do(ctx, env.Visit("/console/"), chromedp.WaitVisible(chromedp.CSS(`input[name=email]`)),
			signInForm(alice.Email, "not-the-password"), WaitText("Invalid email or password.")); err != nil {
			t.Fatal(err)
		}
		path, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`))
		if err != nil || path != "/console/signin" {
			t.Errorf("after a bad password the page is %q (%v), want the sign-in page", path, err)
		}
		Screenshot(t, ctx)
	})

	t.Run("good password", func(t *testing.T) {
		ctx := env.Browser(t)
		// Any console page sends a signed-out visitor to sign in, and back.
		if err := chromedp.Do(ctx, env.Visit("/console/settings/keys"), signInForm(alice.Email, alice.Password),
			WaitText("API keys of Default"), WaitText(alice.Email)); err != nil {
			t.Fatal(err)
		}
		path, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`))
		if err != nil || path != "/console/settings/keys" {
			t.Errorf("after signing in the page is %q (%v), want the page asked for", path, err)
		}
		// The session cookie is HttpOnly: the page's script cannot read it.
		cookies, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.cookie`))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(cookies, "assay_session") || !strings.Contains(cookies, "assay_csrf=") {
			t.Errorf("document.cookie = %q: want assay_csrf only", cookies)
		}
		Screenshot(t, ctx)

		// Sign out: back to the sign-in page; the console asks again.
		if err := chromedp.Do(ctx, ClickText("Sign out"), chromedp.WaitVisible(chromedp.CSS(`input[name=password]`)),
			env.Visit("/console/traces"), chromedp.WaitVisible(chromedp.CSS(`input[name=password]`))); err != nil {
			t.Fatal(err)
		}
	})
}

// TestExpiredSession: a session that expired while the page was away sends
// the user to sign in with the server's message.
func TestExpiredSession(t *testing.T) {
	env := Shared(t)
	bob := env.User(t, "bob@example.com")
	ctx := env.SignedIn(t, bob)
	if err := chromedp.Do(ctx, env.Visit("/console/"), WaitText("Welcome")); err != nil {
		t.Fatal(err)
	}
	env.SQL(t, `UPDATE sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1`, bob.ID)
	if err := chromedp.Do(ctx, env.Visit("/console/traces"), WaitText("Your session has expired. Sign in again."),
		chromedp.WaitVisible(chromedp.CSS(`input[name=password]`))); err != nil {
		t.Fatal(err)
	}
	Screenshot(t, ctx)
	// Signing in again returns to the page.
	if err := chromedp.Do(ctx, signInForm(bob.Email, bob.Password), chromedp.Poll[chromedp.Void](`location.pathname === "/console/traces"`)); err != nil {
		t.Fatal(err)
	}
}

// TestMissingProject: a project the user lost access to, and a user with no
// project at all, are said so on the page, in the server's words.
func TestMissingProject(t *testing.T) {
	env := Shared(t)
	carol := env.User(t, "carol@example.com")
	dave := env.User(t, "dave@example.com")
	// Carol is a viewer in Dave's project.
	env.SQL(t, `INSERT INTO project_memberships (id, project_id, user_id, role) VALUES (gen_random_uuid(), $1, $2, 'viewer')`, dave.Project, carol.ID)

	t.Run("access taken away", func(t *testing.T) {
		ctx := env.SignedIn(t, carol)
		if err := chromedp.Do(ctx, env.Visit("/console/"), WaitText("Welcome"),
			Select(`select[aria-label=Project]`, dave.Project), WaitText("your role: viewer")); err != nil {
			t.Fatal(err)
		}
		env.SQL(t, `DELETE FROM project_memberships WHERE project_id = $1 AND user_id = $2`, dave.Project, carol.ID)
		if err := chromedp.Do(ctx, ClickText("Traces"), WaitText("You are not a member of project "+dave.Project+".")); err != nil {
			t.Fatal(err)
		}
		// The 403 refreshes the session: the switcher no longer offers
		// Dave's project with a role Carol lost, and says she has no access.
		if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`(() => {
			const opts = [...document.querySelectorAll("select[aria-label=Project] option")];
			const sel = document.querySelector("select[aria-label=Project]");
			return !opts.some((o) => o.textContent.includes("(viewer)")) &&
				sel.selectedOptions[0].textContent === "No access: `+dave.Project+`";
		})()`)); err != nil {
			t.Fatal(err)
		}
		Screenshot(t, ctx)
		// Picking her own project works again without a reload: the page
		// asks again, and its answer is no error.
		if err := chromedp.Do(ctx, Select(`select[aria-label=Project]`, carol.Project), chromedp.Poll[chromedp.Void](`(() => {
			const refresh = [...document.querySelectorAll("button")].find((b) => b.textContent === "Refresh");
			return document.querySelector("select[aria-label=Project]").value === "`+carol.Project+`" &&
				refresh && !refresh.disabled && !document.body.innerText.includes("You are not a member");
		})()`)); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("no project", func(t *testing.T) {
		env.SQL(t, `DELETE FROM organizations WHERE owner_user_id = $1`, carol.ID)
		ctx := env.SignedIn(t, carol)
		if err := chromedp.Do(ctx, env.Visit("/console/traces"), WaitText("You are not a member of any project.")); err != nil {
			t.Fatal(err)
		}
		Screenshot(t, ctx)
	})
}
