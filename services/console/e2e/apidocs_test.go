package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// docsDrawn navigates to path and returns the milliseconds from the start
// of the navigation until the page shows what a reader came for: the
// index's links, or the first operation Redoc drew (the old single page
// showed nothing before every operation was drawn).
func docsDrawn(t testing.TB, env *Env, ctx context.Context, path string) float64 {
	t.Helper()
	if err := chromedp.Do(ctx, env.Visit(path)); err != nil {
		t.Fatal(err)
	}
	ms, err := chromedp.Run(ctx, chromedp.Poll[float64](fmt.Sprintf(`(() => {
		if (location.pathname + location.search !== %q) return false;
		const drawn = document.querySelector('ul.tags a') || document.querySelector('[data-section-id*="operation/"]');
		return drawn ? performance.now() : false;
	})()`, path), chromedp.WithPollingTimeout(80*time.Second)))
	if err != nil {
		t.Fatalf("%s never drew: %v", path, err)
	}
	return ms
}

// TestAPIDocsPages: /api/docs is an index of the document's tags, drawn at
// once; a tag's link opens Redoc over that tag's operations only, not
// every operation of the platform. The times are in the test log;
// BenchmarkAPIDocsDraw measures the single page of every operation too.
// Nothing is fetched from anywhere but the gateway (Redoc's own logo came
// from its CDN).
func TestAPIDocsPages(t *testing.T) {
	env := Shared(t)
	ctx := env.Browser(t)
	var mu sync.Mutex
	var outside []string
	requests := chromedp.Events(ctx, network.RequestWillBeSent)
	go func() {
		for ev, err := range requests {
			if err != nil {
				return
			}
			if u := ev.Request.URL; !strings.HasPrefix(u, env.URL+"/") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "blob:") {
				mu.Lock()
				outside = append(outside, u)
				mu.Unlock()
			}
		}
	}()
	index := docsDrawn(t, env, ctx, "/api/docs")
	links, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('ul.tags a')].map(a => a.getAttribute("href"))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(links) < 20 {
		t.Fatalf("the index links %d sections: %q", len(links), links)
	}
	Screenshot(t, ctx)
	if !slices.Contains(links, "/api/docs?tag=Secrets") {
		t.Fatalf("no link to the Secrets section: %q", links)
	}
	secrets := docsDrawn(t, env, ctx, "/api/docs?tag=Secrets")
	ops, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...new Set([...document.querySelectorAll('[data-section-id*="operation/"]')].map(e => e.getAttribute("data-section-id").split("operation/")[1]))]`))
	if err != nil {
		t.Fatal(err)
	}
	// The Secrets tag has five operations (pkg/apidoc/registry*.json);
	// Redoc marks each twice (its menu entry and its section).
	if len(ops) != 5 {
		t.Errorf("the Secrets page draws %d operations, want its 5: %q", len(ops), ops)
	}
	text := pageText(t, ctx)
	for _, other := range []string{"Provision accounts", "Create a testset"} {
		if strings.Contains(text, other) {
			t.Errorf("the Secrets page shows %q, an operation of another tag", other)
		}
	}
	Screenshot(t, ctx)
	t.Logf("drawn: index %.0f ms, Secrets (5 operations) %.0f ms", index, secrets)
	elsewhere, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("[src], link[href]")]
		.map(e => new URL(e.getAttribute("src") ?? e.getAttribute("href"), location.href)).filter(u => u.origin !== location.origin && u.protocol !== "data:").map(String)`))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(outside)+len(elsewhere) > 0 {
		t.Errorf("the docs pages fetch from outside the gateway: requests %q, elements %q", outside, elsewhere)
	}
}

// BenchmarkAPIDocsDraw measures, in Chromium, the time until each docs
// page shows something to read: the index, one tag's page (Evaluators, 37
// operations), and every operation on one page (what /api/docs was before
// the index), each in a fresh browser (cold):
// go test -run '^$' -bench APIDocsDraw -benchtime 2x ./services/console/e2e/
func BenchmarkAPIDocsDraw(b *testing.B) {
	env := Start(b)
	for _, page := range []struct{ name, path string }{
		{"index", "/api/docs"}, {"tag", "/api/docs?tag=Evaluators"}, {"all", "/api/docs?tag=all"},
	} {
		b.Run(page.name, func(b *testing.B) {
			total := 0.0
			for i := 0; i < b.N; i++ {
				// A browser each: each gets the whole deadline (the single
				// page took tens of seconds on a loaded machine).
				ms := docsDrawn(b, env, env.Browser(b), page.path)
				b.Logf("%s drawn in %.0f ms", page.path, ms)
				total += ms
			}
			b.ReportMetric(total/float64(b.N), "ms/draw")
			b.ReportMetric(0, "ns/op")
		})
	}
}
