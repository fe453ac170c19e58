package e2e_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/assayhq/assay/services/console/e2e"
)

// TestTracesToQueueAndTestset: a queue over traces is created on the
// queues page; one trace is added to it and to a testset from a selection
// in the trace list, another from the trace's own page; the API finds both
// in the queue and as two new rows of the testset.
func TestTracesToQueueAndTestset(t *testing.T) {
	env := e2e.Shared(t)
	u := env.User(t, "queue-actions@example.com")
	env.Platform.MustJSON(t, "POST", "/api/simple/evaluators", u.Key, map[string]any{"evaluator": map[string]any{
		"slug": "helpful", "name": "Helpful",
		"data": map[string]any{"schemas": map[string]any{"outputs": map[string]any{
			"type": "object", "properties": map[string]any{"rating": map[string]any{"type": "integer", "enum": []any{1, 2, 3}}},
		}}},
	}})
	ts := env.Platform.MustJSON(t, "POST", "/api/simple/testsets/", u.Key, map[string]any{"testset": map[string]any{
		"slug": "questions", "name": "questions", "data": map[string]any{"testcases": []any{
			map[string]any{"data": map[string]any{"question": "What is NATS?", "correct_answer": "A message broker."}},
		}}}})
	tsID := ts["testset"].(map[string]any)["id"].(string)
	tid1, tid2 := hexID(16), hexID(16)
	spans1, _ := ragTrace(tid1)
	spans2, _ := ragTrace(tid2)
	ingest(t, env, u.Key, tid1, spans1)
	ingest(t, env, u.Key, tid2, spans2)

	ctx := env.SignedIn(t, u)
	if err := chromedp.Do(ctx,
		env.Visit("/console/queues"),
		chromedp.WaitVisible(chromedp.CSS(`input[aria-label="Queue name"]`)),
		e2e.Type(`input[aria-label="Queue name"]`, "review answers"),
		chromedp.WaitVisible(chromedp.CSS(`input[aria-label="Helpful"]`)),
		chromedp.Click(chromedp.CSS(`input[aria-label="Helpful"]`)),
		e2e.ClickText("Create queue"),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('[role="status"]')].some(s => s.innerText.includes("Queue review answers created"))`),
	); err != nil {
		t.Fatal(err)
	}
	e2e.Screenshot(t, ctx)

	list := env.Platform.MustJSON(t, "POST", "/api/simple/queues/query", u.Key, map[string]any{})
	qid := ""
	for _, q := range list["queues"].([]any) {
		q := q.(map[string]any)
		if q["name"] == "review answers" && q["data"].(map[string]any)["kind"] == "traces" {
			qid = q["id"].(string)
		}
	}
	if qid == "" {
		t.Fatalf("no queue over traces named review answers: %v", list)
	}

	if err := chromedp.Do(ctx,
		env.Visit("/console/traces"),
		chromedp.WaitVisible(chromedp.CSS(`input[data-select-trace="`+tid1+`"]`)),
		chromedp.Click(chromedp.CSS(`input[data-select-trace="`+tid1+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="selection"]`)),
		e2e.WaitText("1 trace selected"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="selection"] select[aria-label="Annotation queue"]`)),
		e2e.ClickText("Add to queue"),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('[role="status"]')].some(s => s.innerText.includes("1 trace added to review answers"))`),
		e2e.ClickText("Add to testset"),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('[role="status"]')].some(s => s.innerText.includes("1 row added to questions"))`),
	); err != nil {
		t.Fatal(err)
	}
	e2e.Screenshot(t, ctx)
	if err := chromedp.Do(ctx,
		env.Visit("/console/traces/"+tid2),
		// The buttons wait for the lists of queues and testsets.
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('button')].some(b => b.innerText === "Add to testset" && !b.disabled) &&
			[...document.querySelectorAll('button')].some(b => b.innerText === "Add to queue" && !b.disabled)`),
		e2e.ClickText("Add to queue"),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('[role="status"]')].some(s => s.innerText.includes("1 trace added to review answers"))`),
		e2e.ClickText("Add to testset"),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('[role="status"]')].some(s => s.innerText.includes("1 row added to questions"))`),
	); err != nil {
		t.Fatal(err)
	}
	e2e.Screenshot(t, ctx)

	sc := env.Platform.MustJSON(t, "POST", "/api/simple/queues/"+qid+"/scenarios/query", u.Key, map[string]any{})
	if n, _ := sc["count"].(float64); n != 2 {
		t.Fatalf("the queue holds %v scenarios, want 2 (one per trace): %v", sc["count"], sc)
	}
	rows := testsetRowsOf(t, env, u.Key, tsID)
	added := 0
	for _, r := range rows {
		if r["question"] == "What is Assay?" && r["correct_answer"] == "A platform to evaluate LLM apps." {
			added++
		}
	}
	if len(rows) != 3 || added != 2 {
		t.Fatalf("the testset's rows: %v, want the first and one per trace (question, correct_answer)", rows)
	}
}

// testsetRowsOf reads the rows of a testset's latest revision.
func testsetRowsOf(t *testing.T, env *e2e.Env, key, id string) []map[string]any {
	t.Helper()
	rev := env.Platform.MustJSON(t, "POST", "/api/testsets/revisions/retrieve", key, map[string]any{
		"testset_ref": map[string]any{"id": id}, "include_testcases": true})
	var rows []map[string]any
	for _, tc := range rev["testset_revision"].(map[string]any)["data"].(map[string]any)["testcases"].([]any) {
		rows = append(rows, tc.(map[string]any)["data"].(map[string]any))
	}
	return rows
}
