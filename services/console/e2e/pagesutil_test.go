package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Helpers of the testset, application and evaluation page tests.

// testID is the CSS selector of an element's data-testid.
func testID(id string) chromedp.CSS { return chromedp.CSS(fmt.Sprintf(`[data-testid=%q]`, id)) }

// byLabel is the CSS selector of a control by its aria-label.
func byLabel(label string) chromedp.CSS { return chromedp.CSS(fmt.Sprintf(`[aria-label=%q]`, label)) }

// pickOption sets a <select> the way a user does (React sees a change
// event), once the option is there.
func pickOption(sel chromedp.CSS, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => {
		const el = document.querySelector(%q);
		if (!el || ![...el.options].some(o => o.value === %q)) return false;
		Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, "value").set.call(el, %q);
		el.dispatchEvent(new Event("change", {bubbles: true}));
		return true;
	})()`, string(sel), value, value), chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second))
}

// fillText replaces the value of a controlled input or textarea the way
// typing does (React sees an input event).
func fillText(sel chromedp.CSS, value string) chromedp.Action[chromedp.Void] {
	v, _ := json.Marshal(value)
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => {
		const el = document.querySelector(%q);
		if (!el) return false;
		const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
		Object.getOwnPropertyDescriptor(proto, "value").set.call(el, %s);
		el.dispatchEvent(new Event("input", {bubbles: true}));
		return true;
	})()`, string(sel), v), chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second))
}

// waitJS polls a JavaScript condition for up to 60 s.
func waitJS(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(60*time.Second))
}

// apiUpload uploads a testset file through the simple upload route with
// the user's key and returns the testset id.
func apiUpload(t testing.TB, env *Env, key, name, fileType string, content []byte) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", name+"."+fileType)
	_, _ = fw.Write(content)
	_ = mw.WriteField("file_type", fileType)
	_ = mw.WriteField("testset_name", name)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", env.URL+"/api/simple/testsets/upload", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "ApiKey "+key)
	res, err := (&http.Client{Timeout: 5 * time.Minute}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("upload %s: %d %s", name, res.StatusCode, b)
	}
	var out struct {
		Testset struct{ ID string } `json:"testset"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Testset.ID == "" {
		t.Fatalf("upload %s: %v %s", name, err, b)
	}
	return out.Testset.ID
}

// dig reads a nested value of a decoded JSON object: dig(m, "a", "b", 0).
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// pageText is the visible text of the page.
func pageText(t *testing.T, ctx context.Context) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
