package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// viewerSeesNoWriteControls: a viewer of a project finds no enabled
// write control on the testsets, keys, secrets, evaluations, playground
// and members pages, and each page says why (its role lacks the
// permission; an online evaluation filled in cannot be started); the members page lists the organization's owner, who holds
// the role at organization level, and offers a viewer no role to change.
func viewerSeesNoWriteControls(t *testing.T, env *Env) {
	owner := env.User(t, "roles-owner@example.com")
	viewer := env.User(t, "roles-viewer@example.com")
	status, body := env.Platform.Do(t, "POST", "/api/admin/simple/accounts/projects/memberships", "Access "+AdminKey,
		map[string]any{"project_id": owner.Project, "user_id": viewer.ID, "role": "viewer"})
	if status != http.StatusOK {
		t.Fatalf("membership: %d %s", status, body)
	}
	// The viewer is also a member of the organization, where the owner holds
	// the owner role; the owner has no membership of the project itself
	// (their role there comes from the organization).
	status, body = env.Platform.Do(t, "POST", "/api/admin/simple/accounts/organizations/memberships", "Access "+AdminKey,
		map[string]any{"organization_id": owner.OrganizationID, "user_id": viewer.ID, "role": "viewer"})
	if status != http.StatusOK {
		t.Fatalf("organization membership: %d %s", status, body)
	}
	env.SQL(t, "DELETE FROM project_memberships WHERE project_id = $1 AND user_id = $2", owner.Project, owner.ID)
	ctx := env.SignedIn(t, viewer)
	// ?project_id= picks the owner's project (and the console remembers it).
	if err := chromedp.Do(ctx, env.Visit("/console/testsets?project_id="+owner.Project), WaitText("Testsets")); err != nil {
		t.Fatal(err)
	}

	// enabled lists the page's enabled controls among sel.
	enabled := func(sel string) []string {
		t.Helper()
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(`+"`"+sel+"`"+`)].filter(e => !e.disabled).map(e => e.getAttribute("aria-label") || e.innerText)`))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, page := range []struct {
		path, note, controls string
	}{
		{"/console/testsets", "Viewers cannot upload", `[data-testid="upload-send"], [data-testid="upload-file"]`},
		{"/console/settings/keys", "Viewers cannot see or create", `form[aria-label="Create a key"] button, input[aria-label="Key name"]`},
		{"/console/settings/secrets", "Viewers cannot see or add provider secrets", `form[aria-label="Add a secret"] button`},
		{"/console/evaluations", "Viewers cannot start evaluations", `[data-testid="start-run"]`},
		{"/console/playground", "Viewers cannot run applications", `[data-testid="run-all"]`},
		{"/console/settings/members", "Viewers cannot change roles", `select[aria-label^="Role of"], [data-testid="members"] button`},
	} {
		if err := chromedp.Do(ctx, env.Visit(page.path), WaitText(page.note)); err != nil {
			t.Errorf("%s does not say %q (%v); page:\n%s", page.path, page.note, err, pageText(t, ctx))
			continue
		}
		if page.path == "/console/settings/members" {
			// The table is read after the note shows.
			if err := chromedp.Do(ctx, WaitText("roles-owner@example.com")); err != nil {
				t.Errorf("the members page does not list the organization's owner (%v):\n%s", err, pageText(t, ctx))
			} else if row, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('[data-testid="members"] tr')].find(r => r.innerText.includes("roles-owner@example.com")).innerText`)); !strings.Contains(row, "owner") || !strings.Contains(row, "organization") {
				t.Errorf("the owner's row reads %q, want the owner role held at organization level", row)
			}
		}
		saveScreenshot(t, ctx, strings.ReplaceAll(strings.TrimPrefix(page.path, "/console/"), "/", "-"))
		if got := enabled(page.controls); len(got) > 0 {
			t.Errorf("%s: a viewer sees enabled write controls %q", page.path, got)
		}
	}
	// Only an owner may make an owner: a viewer's own select does not offer it.
	offered, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('select[aria-label="Role of roles-viewer@example.com"] option')].map(o => o.value)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(offered) == 0 || strings.Contains(strings.Join(offered, ","), "owner") {
		t.Errorf("the viewer's role select offers %q, want the roles below owner", offered)
	}
	// An online evaluation filled in completely still cannot be started:
	// the button says why.
	err = chromedp.Do(ctx, env.Visit("/console/evaluations"),
		chromedp.Click(chromedp.CSS(`[data-testid="new-live"] summary`)),
		Type(string(byLabel("online evaluation name")), "viewer's"),
		chromedp.Click(chromedp.CSS(`[aria-label^="online evaluator "]`)),
		waitJS(`document.querySelector('[aria-label^="online evaluator "]').checked`))
	if err != nil {
		t.Errorf("the viewer cannot fill the online evaluation form: %v; page:\n%s", err, pageText(t, ctx))
	} else if got := enabled(`[data-testid="start-live"]`); len(got) > 0 {
		t.Errorf("a viewer can start an online evaluation: %q", got)
	} else if title, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="start-live"]').title`)); !strings.Contains(title, "Viewers cannot create online evaluations") {
		t.Errorf("the disabled Start says %q, want why", title)
	}
}
