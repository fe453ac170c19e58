//go:build ignore

// Evaluation load script (target: 1,000 testcases × 1 application
// × 3 built-in evaluators finish in under 30 s on a 2-core machine with
// everything co-located). It starts an instantly answering OpenAI-compatible
// model server in this process, stores it as the project's custom provider,
// creates a testset of -rows testcases, a completion application on the
// local model and three auto evaluators (exact match, Levenshtein
// distance, contains), then creates a simple evaluation through the gateway
// and polls the run's progress until it is terminal. It prints a timeline
// (scenarios and cells by status every second) and where the time went:
// setup (create → first scenario), execution (first → last cell done),
// and the tail (last cell → run terminal: settle and metrics). Then
// (-rerun, the default) it runs the same evaluation again, whose model
// calls the model-call cache answers, and prints its time and model calls.
//
// Run against `make up`:
//
//	GOWORK=off go run scripts/bench/eval.go [-url http://127.0.0.1:8080] [-rows 1000]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
)

var (
	base       = flag.String("url", "http://127.0.0.1:8080", "gateway URL")
	runDir     = flag.String("run", ".run", "the .run folder of `make up` (admin key)")
	adminF     = flag.String("admin", "", "admin key (default: <run>/admin.key)")
	rows       = flag.Int("rows", 1000, "testcases")
	batch      = flag.Int("batch", 32, "concurrency.batch_size of the run")
	timeout    = flag.Duration("timeout", 5*time.Minute, "give up after this long")
	rerun      = flag.Bool("rerun", true, "run the same evaluation again once the first is over: its model calls are answered from the model-call cache (target: under 5 s, no model call)")
	client     = &http.Client{Timeout: 60 * time.Second}
	authKey    string
	modelCalls atomic.Int64
)

var countries = []string{"France", "Italy", "Spain", "Japan", "Peru", "Kenya", "Chile", "Egypt"}

func main() {
	flag.Parse()
	admin := *adminF
	if admin == "" {
		raw, err := os.ReadFile(*runDir + "/admin.key")
		check(err)
		admin = strings.TrimSpace(string(raw))
	}
	authKey = "ApiKey " + provision(admin)
	model := startModel()
	fmt.Printf("machine: %d cores, %s/%s; model server %s\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, model)

	tag := fmt.Sprint(time.Now().UnixNano())
	call("POST", "/api/secrets/", map[string]any{"header": map[string]any{"name": "bench-local"},
		"secret": map[string]any{"kind": "custom_provider", "data": map[string]any{"kind": "custom", "provider_slug": "bench-local",
			"provider": map[string]any{"url": model, "key": "none"}, "models": []any{map[string]any{"slug": "instant"}}}}}, nil)

	cases := make([]any, *rows)
	for i := range cases {
		c := countries[i%len(countries)]
		cases[i] = map[string]any{"data": map[string]any{"country": c, "n": i, "answer": "Paris"}}
	}
	var ts struct{ Testset map[string]any }
	t0 := time.Now()
	call("POST", "/api/simple/testsets/", map[string]any{"testset": map[string]any{"slug": "bench-eval-" + tag,
		"name": "bench", "data": map[string]any{"testcases": cases}}}, &ts)
	fmt.Printf("testset of %d testcases created in %.2f s\n", *rows, time.Since(t0).Seconds())

	var app struct{ Application map[string]any }
	call("POST", "/api/simple/applications/", map[string]any{"application": map[string]any{"slug": "bench-eval-app-" + tag,
		"flags": map[string]any{"is_application": true},
		"data": map[string]any{"uri": "svc:builtin:completion:v0", "parameters": map[string]any{"prompt": map[string]any{
			"messages": []any{
				map[string]any{"role": "system", "content": "You answer briefly."},
				map[string]any{"role": "user", "content": "Capital of {{country}}?"}},
			"input_keys": []any{"country"},
			"llm_config": map[string]any{"model": "bench-local/instant"}}}}}}, &app)

	evaluators := map[string]any{}
	for _, e := range []struct {
		key    string
		params map[string]any
	}{
		{"auto_exact_match", map[string]any{"correct_answer_key": "answer"}},
		{"auto_levenshtein_distance", map[string]any{"correct_answer_key": "answer", "threshold": 0.5}},
		{"auto_contains", map[string]any{"substring": "Par", "case_sensitive": true}},
	} {
		var ev struct{ Evaluator map[string]any }
		call("POST", "/api/simple/evaluators/", map[string]any{"evaluator": map[string]any{"slug": "bench-" + e.key + "-" + tag,
			"data": map[string]any{"uri": "svc:builtin:" + e.key + ":v0", "parameters": e.params}}}, &ev)
		evaluators[ev.Evaluator["revision_id"].(string)] = "auto"
	}

	evaluate("bench "+tag, ts.Testset["revision_id"], app.Application["revision_id"], evaluators)
	if *rerun {
		before := modelCalls.Load()
		fmt.Println("the same evaluation again (model calls answered from the cache):")
		evaluate("bench "+tag+" again", ts.Testset["revision_id"], app.Application["revision_id"], evaluators)
		fmt.Printf("re-run: %d model calls\n", modelCalls.Load()-before)
	}
}

// evaluate creates the simple evaluation, polls its progress until it is
// terminal and prints the timeline and where the time went.
func evaluate(name string, testsetRev, appRev any, evaluators map[string]any) {
	var created struct {
		Count      int
		Evaluation map[string]any
	}
	start := time.Now()
	call("POST", "/api/simple/evaluations/", map[string]any{"evaluation": map[string]any{"name": name,
		"data": map[string]any{
			"testset_steps":     []any{testsetRev},
			"application_steps": []any{appRev},
			"evaluator_steps":   evaluators,
			"concurrency":       map[string]any{"batch_size": *batch},
		}}}, &created)
	if created.Count != 1 {
		fmt.Fprintln(os.Stderr, "the evaluation was not created")
		os.Exit(1)
	}
	runID, _ := created.Evaluation["run_id"].(string)
	if runID == "" {
		runID = created.Evaluation["id"].(string)
	}
	fmt.Printf("evaluation created and started in %.2f s (run %s)\n", time.Since(start).Seconds(), runID)

	var firstScenario, lastCell time.Duration
	cells := *rows * (1 + 1 + 3)
	lastPrint := time.Time{}
	for {
		if time.Since(start) > *timeout {
			fmt.Fprintln(os.Stderr, "timed out")
			os.Exit(1)
		}
		var p struct {
			Progress struct {
				Status    string         `json:"status"`
				Scenarios map[string]int `json:"scenarios"`
				Results   map[string]int `json:"results"`
			}
		}
		call("GET", "/api/evaluations/runs/"+runID+"/progress", nil, &p)
		el := time.Since(start)
		if firstScenario == 0 && p.Progress.Scenarios["total"] > 0 {
			firstScenario = el
		}
		done := p.Progress.Results["success"] + p.Progress.Results["failure"] + p.Progress.Results["errors"]
		if lastCell == 0 && done >= cells {
			lastCell = el
		}
		if time.Since(lastPrint) >= time.Second {
			fmt.Printf("  %5.1f s  run %-8s scenarios %v  cells %v\n", el.Seconds(), p.Progress.Status, p.Progress.Scenarios, p.Progress.Results)
			lastPrint = time.Now()
		}
		switch p.Progress.Status {
		case "success", "errors", "failure", "cancelled":
			total := time.Since(start)
			fmt.Printf("run %s: %s after %.2f s (target < 30 s); %d cells, %d model calls\n", runID, p.Progress.Status, total.Seconds(), cells, modelCalls.Load())
			if lastCell == 0 {
				lastCell = total
			}
			fmt.Printf("  setup (create → first scenario)        %6.2f s\n", firstScenario.Seconds())
			fmt.Printf("  execution (first scenario → last cell) %6.2f s  (%.0f cells/s)\n", (lastCell - firstScenario).Seconds(),
				float64(cells)/max((lastCell-firstScenario).Seconds(), 0.001))
			fmt.Printf("  tail (last cell → terminal: metrics)   %6.2f s\n", (total - lastCell).Seconds())
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// startModel serves POST /v1/chat/completions with a fixed answer at once,
// on loopback: the platform must admit it (ASSAY_EGRESS_ALLOW=127.0.0.1
// make up), or the runtime's egress policy refuses the call.
func startModel() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	answer := []byte(`{"id":"chatcmpl-bench","object":"chat.completion","created":0,"model":"instant","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Paris"}}],"usage":{"prompt_tokens":12,"completion_tokens":1,"total_tokens":13}}`)
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
		modelCalls.Add(1)
	}))
	return "http://" + ln.Addr().String() + "/v1"
}

func provision(admin string) string {
	email := fmt.Sprintf("bench-%d@example.com", time.Now().UnixNano())
	body := fmt.Sprintf(`{"accounts":{"bench":{"user":{"email":%q}}}}`, email)
	req, _ := http.NewRequest("POST", *base+"/api/admin/simple/accounts/", strings.NewReader(body))
	req.Header.Set("Authorization", "Access "+admin)
	req.Header.Set("Content-Type", "application/json")
	var out struct {
		Accounts map[string]struct {
			APIKeys map[string]string `json:"api_keys"`
		} `json:"accounts"`
	}
	do(req, &out)
	return out.Accounts["bench"].APIKeys["key"]
}

func call(method, path string, body any, out any) {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, *base+path, rd)
	req.Header.Set("Authorization", authKey)
	req.Header.Set("Content-Type", "application/json")
	do(req, out)
}

func do(req *http.Request, out any) {
	res, err := client.Do(req)
	check(err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 {
		fmt.Fprintf(os.Stderr, "%s %s: %d %s\n", req.Method, req.URL.Path, res.StatusCode, b)
		os.Exit(1)
	}
	if out != nil {
		check(json.Unmarshal(b, out))
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
