package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// chatPlayground: a chat application's playground is a conversation. A
// message is sent, the model's answer comes back as the assistant's turn
// with its figures; the next message carries the whole conversation (the
// model server receives the first question and answer with it); the
// conversation clears.
func chatPlayground(t *testing.T, env *Env, u User, ctx context.Context) {
	app := env.Platform.MustJSON(t, "POST", "/api/simple/applications/", u.Key, map[string]any{"application": map[string]any{
		"name": "Travel chat", "data": map[string]any{"uri": "agenta:builtin:chat:v0", "parameters": map[string]any{"prompt": map[string]any{
			"messages":        []any{map[string]any{"role": "system", "content": "You are a concise travel assistant."}},
			"template_format": "curly", "llm_config": map[string]any{"model": "gpt-4o-mini"}}}}}})
	id := str(dig(app, "application", "id"))
	turns := func(role string) string {
		return `[...document.querySelectorAll('[data-testid="chat-turn-` + role + `"] [data-testid="chat-content"]')].map(e => e.innerText.trim())`
	}
	err := chromedp.Do(ctx,
		env.Visit("/console/playground?app="+id),
		chromedp.WaitVisible(byLabel("chat message")),
		// A chat pane sends with its own Send: no Run button that would do
		// nothing.
		waitJS(`document.querySelector('[data-testid="run-all"]') === null`),
		Type(string(byLabel("chat message")), "Capital of Peru?"),
		chromedp.Click(testID("chat-send")),
		waitJS(turns("assistant")+`.join("|") === "echo: Capital of Peru?"`),
		waitJS(`(() => { const f = document.querySelector('[data-testid="chat-turn-assistant"] [data-testid="pane-figures"]');
			return !!f && /latency \d/.test(f.innerText) && /\d+ tokens/.test(f.innerText) && /cost \$/.test(f.innerText); })()`),
		Type(string(byLabel("chat message")), "And of Chile?"),
		chromedp.Click(testID("chat-send")),
		waitJS(turns("assistant")+`.join("|") === "echo: Capital of Peru?|echo: And of Chile?"`),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	// On a 1280×800 window, with the page at its top, the conversation's
	// latest answer, the message box and Send are in view: the model
	// settings do not push them below the fold.
	err = chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 800),
		waitJS(`(window.scrollTo(0, 0), innerHeight === 800 && scrollY === 0)`),
	)
	if err != nil {
		t.Fatal(err)
	}
	view, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
			const inView = (el) => { if (!el) return false; const r = el.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight && r.height > 0; };
			const answers = document.querySelectorAll('[data-testid="chat-turn-assistant"]');
			return JSON.stringify({ box: inView(document.querySelector('[aria-label="chat message"]')), send: inView(document.querySelector('[data-testid="chat-send"]')),
				answer: inView(answers[answers.length - 1]), scrollY: scrollY });
		})()`))
	if err != nil {
		t.Fatal(err)
	}
	if view != `{"box":true,"send":true,"answer":true,"scrollY":0}` {
		t.Errorf("on a 1280x800 window the chat is not where the eye goes (in view at the top of the page): %s", view)
	}
	Screenshot(t, ctx)
	last, ok := env.Platform.LLM.LastRequest()
	if !ok {
		t.Fatal("the model server got no request")
	}
	msgs, _ := json.Marshal(last.Body["messages"])
	var got []struct{ Role, Content string }
	_ = json.Unmarshal(msgs, &got)
	var flat []string
	for _, m := range got {
		flat = append(flat, m.Role+": "+m.Content)
	}
	want := []string{"system: You are a concise travel assistant.", "user: Capital of Peru?", "assistant: echo: Capital of Peru?", "user: And of Chile?"}
	if strings.Join(flat, "\n") != strings.Join(want, "\n") {
		t.Errorf("the second message carried %q, want the conversation %q", flat, want)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(testID("chat-clear")),
		waitJS(`document.querySelectorAll('[data-testid^="chat-turn-"]').length === 0`),
	)
	if err != nil {
		t.Fatalf("clear conversation: %v; page:\n%s", err, pageText(t, ctx))
	}
}
