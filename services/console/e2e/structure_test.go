package e2e_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/assayhq/assay/services/console/e2e"
)

// TestCreateProjectWorkspaceOrganization: an owner creates a project, a
// workspace and an organization from settings, without the API; each
// appears through the API where it was asked for, and the new project is
// in the project switcher at once.
func TestCreateProjectWorkspaceOrganization(t *testing.T) {
	env := e2e.Shared(t)
	u := env.User(t, "structure-owner@example.com")
	ctx := env.SignedIn(t, u)
	if err := chromedp.Do(ctx,
		env.Visit("/console/settings/projects"),
		chromedp.WaitVisible(chromedp.CSS(`input[aria-label="Project name"]`)),
		e2e.Type(`input[aria-label="Project name"]`, "Checkout bot"),
		e2e.ClickText("Create project"),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('[role="status"]')].some(s => s.innerText.includes("Project Checkout bot created"))`),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('select[aria-label="Project"] option')].some(o => o.innerText.startsWith("Checkout bot"))`),
		e2e.Type(`input[aria-label="Workspace name"]`, "Research"),
		e2e.ClickText("Create workspace"),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('[role="status"]')].some(s => s.innerText.includes("Workspace Research created"))`),
		e2e.Type(`input[aria-label="Organization name"]`, "Acme Labs"),
		e2e.ClickText("Create organization"),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('[role="status"]')].some(s => s.innerText.includes("Organization Acme Labs created"))`),
		// The tree shows them by name, where they belong.
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('[data-testid="structure"] li')].some(li => li.innerText.includes("Checkout bot"))`),
	); err != nil {
		t.Fatal(err)
	}
	e2e.Screenshot(t, ctx)

	// The new organization's Default project and the user's first one
	// both named "Default": the switcher tells them apart.
	options, err := chromedp.Run(ctx, chromedp.Poll[[]string](`(() => {
		const o = [...document.querySelectorAll('select[aria-label="Project"] option')].map(o => o.innerText).filter(x => x !== "New project…");
		return o.length >= 3 && o;
	})()`))
	if err != nil {
		t.Fatalf("the switcher does not list the new organization's project: %v", err)
	}
	seen := map[string]bool{}
	for _, o := range options {
		if seen[o] {
			t.Errorf("the project switcher lists %q twice: %q", o, options)
		}
		seen[o] = true
	}
	if !strings.Contains(strings.Join(options, "\n"), "Acme Labs / Default") {
		t.Errorf("the switcher does not name the new organization's Default project by its organization: %q", options)
	}

	cookie := signInCookie(t, env, u)
	var projects struct {
		Projects []struct {
			Name        string
			WorkspaceID string `json:"workspace_id"`
		} `json:"projects"`
	}
	getJSON(t, env, "/api/projects", cookie, &projects)
	found := false
	for _, p := range projects.Projects {
		if p.Name == "Checkout bot" {
			found = p.WorkspaceID == u.WorkspaceID
		}
	}
	if !found {
		t.Fatalf("no project Checkout bot in workspace %s: %+v", u.WorkspaceID, projects)
	}
	var workspaces struct {
		Workspaces []struct {
			Name           string
			OrganizationID string `json:"organization_id"`
		} `json:"workspaces"`
	}
	getJSON(t, env, "/api/workspaces", cookie, &workspaces)
	found = false
	for _, w := range workspaces.Workspaces {
		if w.Name == "Research" {
			found = w.OrganizationID == u.OrganizationID
		}
	}
	if !found {
		t.Fatalf("no workspace Research in organization %s: %+v", u.OrganizationID, workspaces)
	}
	var orgs []struct{ Name, Role string }
	getJSON(t, env, "/api/organizations", cookie, &orgs)
	found = false
	for _, o := range orgs {
		if o.Name == "Acme Labs" {
			found = o.Role == "owner"
		}
	}
	if !found {
		t.Fatalf("no organization Acme Labs owned by the user: %+v", orgs)
	}
}

// signInCookie signs u in from Go and returns the session's Cookie header.
func signInCookie(t *testing.T, env *e2e.Env, u e2e.User) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"email": u.Email, "password": u.Password})
	res, err := http.Post(env.URL+"/api/auth/sign-in", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("sign-in: %d", res.StatusCode)
	}
	cookie := ""
	for _, c := range res.Cookies() {
		if cookie != "" {
			cookie += "; "
		}
		cookie += c.Name + "=" + c.Value
	}
	return cookie
}

func getJSON(t *testing.T, env *e2e.Env, path, cookie string, out any) {
	t.Helper()
	req, _ := http.NewRequest("GET", env.URL+path, nil)
	req.Header.Set("Cookie", cookie)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", path, res.StatusCode)
	}
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}
