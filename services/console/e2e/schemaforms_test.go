package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/assayhq/assay/services/console/e2e"
)

// annotateWith2020Schema annotates a trace with a human evaluator whose
// outputs schema declares JSON Schema 2020-12, as every schema the registry
// hydrates does and as the compatible clients send it. A valid value is
// saved and read back through the API; one the schema refuses shows the
// validator's error next to the form and stores nothing. It runs in
// TestAnnotateTrace, with that test's platform, user and browser.
func annotateWith2020Schema(t *testing.T, env *e2e.Env, u e2e.User, ctx context.Context) {
	tid := hexID(16)
	spans, _ := ragTrace(tid)
	ingest(t, env, u.Key, tid, spans)
	ev := env.Platform.MustJSON(t, "POST", "/api/simple/evaluators", u.Key, map[string]any{"evaluator": map[string]any{
		"slug": "helpful", "name": "Helpful",
		"flags": map[string]any{"is_human": true},
		"data": map[string]any{"uri": "agenta:custom:feedback:v0", "schemas": map[string]any{"outputs": map[string]any{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type":    "object", "required": []any{"score"}, "additionalProperties": false,
			"properties": map[string]any{
				"score":   map[string]any{"type": "number", "minimum": 0, "maximum": 5},
				"comment": map[string]any{"type": "string"},
			},
		}}},
	}})
	evID := ev["evaluator"].(map[string]any)["id"].(string)

	if err := chromedp.Do(ctx,
		chromedp.Navigate(env.URL+"/console/traces/"+tid),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="span-tree"] [role="treeitem"]`)),
		chromedp.WaitReady(chromedp.CSS(fmt.Sprintf(`select[aria-label="Evaluator"] option[value=%q]`, evID))),
		selectValue(`select[aria-label="Evaluator"]`, evID),
		chromedp.WaitVisible(chromedp.CSS(`#root_score`)),
		e2e.Type(`#root_score`, "4"),
		e2e.Type(`#root_comment`, "to the point"),
		chromedp.Click(`//button[text()="Save annotation"]`),
		e2e.WaitText("Annotation saved."),
	); err != nil {
		t.Fatalf("a valid annotation: %v", err)
	}

	// The saved form is empty again; a score over the schema's maximum is
	// refused in the page, saying which field and why.
	if err := chromedp.Do(ctx,
		chromedp.Poll[chromedp.Void](`document.querySelector("#root_score")?.value === ""`, chromedp.WithPollingInterval(50*time.Millisecond)),
		e2e.Type(`#root_score`, "9"),
		chromedp.Click(`//button[text()="Save annotation"]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="form-errors"]`)),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="form-errors"]').scrollIntoView({block: "center"})`),
	); err != nil {
		t.Fatalf("a score over the maximum: %v", err)
	}
	msg, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="form-errors"]`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "score: must be <= 5") {
		t.Errorf("the refusal says %q, not which field and why", msg)
	}
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, "Annotation saved.") {
		t.Errorf("the page says the refused annotation was saved:\n%s", text)
	}
	e2e.Screenshot(t, ctx)

	got, list := traceAnnotations(t, env, u.Key, tid)
	if len(list) != 1 {
		t.Fatalf("annotations of the trace (the refused 9 must not be among them): %v", got)
	}
	a := list[0].(map[string]any)
	outputs := a["data"].(map[string]any)["outputs"].(map[string]any)
	if outputs["score"] != 4.0 || outputs["comment"] != "to the point" {
		t.Fatalf("annotation: %v", a)
	}
}
