// Package e2e runs the web console in a real headless Chromium (Debian's
// chromium, driven over the DevTools protocol by chromedp) against the whole
// platform: every service a real binary on real PostgreSQL, ClickHouse and
// NATS (platformtest), the console service behind the gateway, and the
// local model server (llmtest) as the provider.
//
// A test gets the package's shared platform with Shared(t) (or its own with
// Start(t), when it changes the platform's state: the model server's
// replies, a service's settings), provisions a user of its own with User,
// opens a browser with Browser or SignedIn, drives it with chromedp
// actions on env.URL+"/console/...", and saves what the page looked like
// with Screenshot (services/console/e2e/screenshots/<TestName>.png, git-ignored;
// one is also taken when a test fails).
package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"

	"github.com/assayhq/assay/pkg/testutil/platformtest"
	"github.com/assayhq/assay/pkg/testutil/svctest"
)

// AdminKey is the gateway's admin key in these tests
// (Authorization: Access <AdminKey> on /api/admin/).
const AdminKey = platformtest.AdminKey

// Env is a running platform with the console.
type Env struct {
	// URL is the gateway's base URL; the console is at URL + "/console/".
	URL string
	// Platform gives the services, the model server (Platform.LLM) and
	// API calls through the gateway (Platform.Do, Platform.MustJSON).
	Platform *platformtest.Platform
	// Console is the console service process.
	Console *svctest.Service
}

// root is the repository root, found from this file.
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Chromium returns the browser binary: $ASSAY_CHROMIUM, else Debian's
// chromium (`scripts/deps.sh up test`, run by make test, installs it; nothing is ever downloaded).
func Chromium() (string, error) {
	if p := os.Getenv("ASSAY_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("chromium not found: `scripts/deps.sh up test` (make test) installs Debian's chromium (or set ASSAY_CHROMIUM)")
}

// Built fails the test unless the console was built: the console binary
// embeds services/console/web/dist, which only `make console` fills.
func Built(t testing.TB) {
	t.Helper()
	index := filepath.Join(root(), "services", "console", "web", "dist", "index.html")
	if _, err := os.Stat(index); err != nil {
		t.Fatalf("the console is not built (%s is missing): run `make console` first (make test does)", index)
	}
}

// Options change what Start runs.
type Options struct {
	// Gateway, Registry, ... add "K=V" variables to a service's environment.
	platformtest.Options
}

// Start runs the platform with the console behind the gateway; everything
// stops when the test ends.
func Start(t testing.TB, opts ...Options) *Env {
	t.Helper()
	Built(t)
	if _, err := Chromium(); err != nil {
		t.Fatal(err)
	}
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	console := svctest.Start(t, svctest.Options{Pkg: "services/console/cmd/console", AddrVar: "CONSOLE_ADDR",
		Env: []string{"CONSOLE_LOG_LEVEL=warn"}})
	o.Gateway = append([]string{"GATEWAY_CONSOLE_URL=" + console.URL}, o.Gateway...)
	p := platformtest.Start(t, o.Options)
	return &Env{URL: p.URL, Platform: p, Console: console}
}

// User is a provisioned user who signs in with Email and Password, owner of
// their own organization, workspace and project.
type User struct {
	Email, Password                          string
	ID, OrganizationID, WorkspaceID, Project string
	// Key is an API key of Project ("ApiKey " + Key authenticates).
	Key string
}

// User provisions a user with an email:password identity through the
// admin API; the password is random.
func (e *Env) User(t testing.TB, email string) User {
	t.Helper()
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	password := "pw-" + hex.EncodeToString(b)
	status, body := e.Platform.Do(t, "POST", "/api/admin/simple/accounts", "Access "+AdminKey, map[string]any{"accounts": map[string]any{
		"u": map[string]any{
			"user":            map[string]any{"email": email},
			"user_identities": []any{map[string]any{"method": "email:password", "subject": email, "password": password, "verified": true}},
		}}})
	if status != http.StatusOK {
		t.Fatalf("e2e: provision %s: %d %s", email, status, body)
	}
	var out struct {
		Accounts map[string]struct {
			User          struct{ ID string }            `json:"user"`
			Organizations map[string]struct{ ID string } `json:"organizations"`
			Workspaces    map[string]struct{ ID string } `json:"workspaces"`
			Projects      map[string]struct{ ID string } `json:"projects"`
			APIKeys       map[string]string              `json:"api_keys"`
		} `json:"accounts"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("e2e: provision %s: %v: %s", email, err, body)
	}
	a := out.Accounts["u"]
	return User{Email: email, Password: password, ID: a.User.ID, OrganizationID: a.Organizations["org"].ID,
		WorkspaceID: a.Workspaces["wrk"].ID, Project: a.Projects["prj"].ID, Key: a.APIKeys["key"]}
}

// Timeout bounds what one browser does in a test (its context's deadline).
const Timeout = 90 * time.Second

// Browser starts a fresh headless Chromium (its own profile: no cookie is
// shared with another Browser) and returns a context for chromedp.Do and
// chromedp.Run, with a deadline of Timeout. The page's uncaught exceptions
// and console errors are logged with t.Logf. When the test fails, a
// screenshot of the last page is saved as <TestName>-failed.png.
func (e *Env) Browser(t testing.TB) context.Context {
	t.Helper()
	bin, err := Chromium()
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.WindowSize(1280, 900),
		chromedp.DisableGPU,
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses its sandbox as root
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	browser, cancelBrowser := chromedp.NewContext(alloc, chromedp.WithErrorf(func(f string, a ...any) { t.Logf("chromedp: "+f, a...) }))
	// The first Do starts the browser and binds it to this context, which
	// must have no deadline; the test's context below has one.
	if err := chromedp.Do(browser); err != nil {
		cancelBrowser()
		cancelAlloc()
		t.Fatalf("e2e: start %s: %v", bin, err)
	}
	// Every page reports what its Content-Security-Policy blocked as a
	// console error; a test fails on it, so each test also shows that the
	// console's policy (services/console/internal/spa) lets the pages it
	// visits work.
	if _, err := chromedp.Call(browser, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: cspReporter}); err != nil {
		cancelBrowser()
		cancelAlloc()
		t.Fatalf("e2e: install the CSP reporter: %v", err)
	}
	var mu sync.Mutex
	ended := false
	var blocked []string
	messages := chromedp.Console(browser)
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type != chromedp.ConsoleError && m.Type != chromedp.ConsoleException && m.Type != chromedp.ConsoleWarning {
				continue
			}
			// The browser logs every 4xx answer; the tests expect those
			// (signed out, refused), and the page shows them.
			if strings.HasPrefix(m.Text, "Failed to load resource: the server responded with a status of 4") {
				continue
			}
			mu.Lock()
			if !ended {
				t.Logf("page %s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line+1)
				if strings.HasPrefix(m.Text, cspPrefix) {
					blocked = append(blocked, m.Text)
				}
			}
			mu.Unlock()
		}
	}()
	ctx, cancelTimeout := context.WithTimeout(browser, Timeout)
	t.Cleanup(func() {
		if t.Failed() {
			saveScreenshot(t, browser, "failed")
		}
		mu.Lock()
		ended = true
		mu.Unlock()
		cancelTimeout()
		cancelBrowser()
		cancelAlloc()
		<-logged
		if len(blocked) > 0 {
			t.Errorf("the console's Content-Security-Policy blocked: %s", strings.Join(blocked, "; "))
		}
	})
	return ctx
}

// cspPrefix starts the console error cspReporter logs.
const cspPrefix = "CSP violation:"

// cspReporter runs in every page before its own scripts (a DevTools
// script, which the page's policy does not restrict).
const cspReporter = `document.addEventListener("securitypolicyviolation", (e) =>
  console.error("` + cspPrefix + ` " + e.effectiveDirective + " blocked " + (e.blockedURI || "inline") + " at " + e.sourceFile + ":" + e.lineNumber));`

// SignedIn is Browser with u signed in: POST /api/auth/sign-in from Go, its
// cookies put into the browser, so the first navigation is signed in.
func (e *Env) SignedIn(t testing.TB, u User) context.Context {
	t.Helper()
	ctx := e.Browser(t)
	body, _ := json.Marshal(map[string]string{"email": u.Email, "password": u.Password})
	res, err := http.Post(e.URL+"/api/auth/sign-in", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("e2e: sign in %s: %v", u.Email, err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("e2e: sign in %s: %s", u.Email, res.Status)
	}
	for _, c := range res.Cookies() {
		_, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{Name: c.Name, Value: c.Value, URL: e.URL, Path: "/",
			HTTPOnly: &c.HttpOnly, SameSite: network.CookieSameSiteLax})
		if err != nil {
			t.Fatalf("e2e: set cookie %s: %v", c.Name, err)
		}
	}
	return ctx
}

// Screenshot saves the browser's viewport as
// services/console/e2e/screenshots/<TestName>.png.
func Screenshot(t testing.TB, ctx context.Context) {
	t.Helper()
	saveScreenshot(t, ctx, "")
}

func saveScreenshot(t testing.TB, ctx context.Context, suffix string) {
	buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Logf("e2e: screenshot: %v", err)
		return
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	if suffix != "" {
		name += "-" + suffix
	}
	dir := filepath.Join(root(), "services", "console", "e2e", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Errorf("e2e: screenshot: %v", err)
		return
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Errorf("e2e: screenshot: %v", err)
		return
	}
	t.Logf("screenshot: %s", path)
}

// WaitText waits (up to 30 s) until the page's visible text contains text.
func WaitText(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.body && document.body.innerText.includes(%q)`, text),
		chromedp.WithPollingInterval(50*time.Millisecond))
}

// Visit navigates to path on the gateway (e.g. "/console/traces") and
// waits for the load event.
func (e *Env) Visit(path string) chromedp.Action[chromedp.Void] {
	return chromedp.Navigate(e.URL + path)
}

// SQL runs a statement on the platform's PostgreSQL database (the gateway's
// and the registry's), for what no route does: expiring a session, taking
// a membership away behind the user's back.
func (e *Env) SQL(t testing.TB, query string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, e.Platform.PostgresURL)
	if err != nil {
		t.Fatalf("e2e: connect to PostgreSQL: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, query, args...); err != nil {
		t.Fatalf("e2e: %s: %v", query, err)
	}
}

// AcceptDialogs accepts every alert, confirm and prompt the page opens from
// now on (a confirm before a revoke, say), as a user clicking OK.
func AcceptDialogs(t testing.TB, ctx context.Context) {
	t.Helper()
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			if _, err := chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true}); err != nil {
				return
			}
			_ = ev
		}
	}()
}

// Select picks value in the <select> matched by the CSS selector sel the
// way a user does, so the page's change handlers run (React listens to the
// change event; setting .value alone is not seen).
func Select(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const s = document.querySelector(%q);
		if (!s) throw new Error("no element " + %q);
		Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, "value").set.call(s, %q);
		s.dispatchEvent(new Event("change", {bubbles: true}));
	})()`, sel, sel, value))
}

// ClickText clicks the first link or enabled button whose visible text is
// text, waiting until there is one: a click on a button still disabled
// (waiting for the lists it needs) does nothing, and the test would then
// wait for an answer that never comes.
func ClickText(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Click(chromedp.Search(fmt.Sprintf(`//*[self::a or self::button[not(@disabled)]][normalize-space(.)=%q]`, text)))
}

// Type clicks the field matched by the CSS selector sel (which focuses it)
// and types text into it, firing the input events a page listens to.
// Use it instead of chromedp.SendKeys: SendKeys (v0.23.0) reads the node's
// attributes without their lock while DOM events update them, a data race
// that go test -race reports as a failure.
func Type(sel, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Click(chromedp.CSS(sel)),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: text})
			return err
		}),
	)
}
