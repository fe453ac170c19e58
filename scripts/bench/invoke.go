//go:build ignore

// Invocation load script: what the hosted runtime costs on top of the
// model. It starts an instantly answering OpenAI-compatible model server
// in this process, stores it as the project's custom provider (vault
// secret), creates a completion application on it, then invokes
// POST /services/completion/v0/invoke {references} through the gateway:
//  1. at a fixed arrival rate (open loop; default 200/s): latency
//     percentiles, which are the runtime's overhead since the model answers
//     at once (its own handling time is reported beside them);
//  2. closed loop with -concurrency callers: the highest sustained
//     invocations/s on this machine.
//
// Every invocation also publishes its trace (2 spans). Target: overhead p99
// < 5 ms at 200/s. Run against `make up`:
//
//	GOWORK=off go run scripts/bench/invoke.go [-url http://127.0.0.1:8080] [-rate 200] [-seconds 20] [-concurrency 32]
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
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var (
	base        = flag.String("url", "http://127.0.0.1:8080", "gateway URL")
	runDir      = flag.String("run", ".run", "the .run folder of `make up` (admin key)")
	adminF      = flag.String("admin", "", "admin key (default: <run>/admin.key)")
	rate        = flag.Int("rate", 200, "invocations per second of the open-loop phase")
	seconds     = flag.Int("seconds", 20, "duration of each measured phase")
	concurrency = flag.Int("concurrency", 32, "callers of the closed-loop phase")
	inline      = flag.Bool("inline", false, "send the parameters inline (a playground call: no registry lookup) instead of references")
	client      = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1024}}
	authKey     string
	modelNanos  atomic.Int64 // time the model server spent answering
	modelCalls  atomic.Int64
)

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

	call("POST", "/api/secrets/", map[string]any{"header": map[string]any{"name": "bench-local"},
		"secret": map[string]any{"kind": "custom_provider", "data": map[string]any{"kind": "custom", "provider_slug": "bench-local",
			"provider": map[string]any{"url": model, "key": "none"}, "models": []any{map[string]any{"slug": "instant"}}}}}, nil)
	call("POST", "/api/simple/applications/", map[string]any{"application": map[string]any{"slug": "bench-invoke",
		"flags": map[string]any{"is_application": true},
		"data": map[string]any{"uri": "svc:builtin:completion:v0", "parameters": map[string]any{"prompt": map[string]any{
			"messages": []any{
				map[string]any{"role": "system", "content": "You answer briefly."},
				map[string]any{"role": "user", "content": "Capital of {{country}}?"}},
			"llm_config": map[string]any{"model": "bench-local/instant"}}}}}}, nil)

	body := []byte(`{"references":{"application":{"slug":"bench-invoke"}},"data":{"inputs":{"country":"France"}}}`)
	if *inline {
		body = []byte(`{"data":{"inputs":{"country":"France"},"parameters":{"prompt":{"messages":[` +
			`{"role":"system","content":"You answer briefly."},{"role":"user","content":"Capital of {{country}}?"}],` +
			`"llm_config":{"model":"bench-local/instant"}}}}}`)
	}
	if s := invoke(body); s != 200 {
		fmt.Fprintf(os.Stderr, "invoke answered %d\n", s)
		os.Exit(1)
	}
	openLoop(body, 100, 3) // warm-up, not reported
	modelNanos.Store(0)
	modelCalls.Store(0)
	r := openLoop(body, *rate, *seconds)
	report(fmt.Sprintf("open loop, %d invocations/s for %d s (target: overhead p99 < 5 ms)", *rate, *seconds), r)
	modelNanos.Store(0)
	modelCalls.Store(0)
	closedLoop(body, *concurrency, *seconds)
}

type result struct {
	lat    []time.Duration
	status map[int]int
}

// openLoop sends rate invocations/s for secs seconds on a fixed schedule;
// latency counts from the scheduled start.
func openLoop(body []byte, rate, secs int) result {
	n := rate * secs
	interval := time.Second / time.Duration(rate)
	res := result{lat: make([]time.Duration, n), status: map[int]int{}}
	statuses := make([]int, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		at := start.Add(time.Duration(i) * interval)
		time.Sleep(time.Until(at))
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = invoke(body)
			res.lat[i] = time.Since(at)
		}()
	}
	wg.Wait()
	for _, s := range statuses {
		res.status[s]++
	}
	return res
}

func closedLoop(body []byte, callers, secs int) {
	var ok, failed atomic.Int64
	deadline := time.Now().Add(time.Duration(secs) * time.Second)
	var wg sync.WaitGroup
	start := time.Now()
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if invoke(body) == 200 {
					ok.Add(1)
				} else {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	fmt.Printf("closed loop, %d callers for %d s\n  %.0f invocations/s (%d ok, %d failed)\n", callers, secs, float64(ok.Load())/el, ok.Load(), failed.Load())
}

func invoke(body []byte) int {
	req, _ := http.NewRequest("POST", *base+"/services/completion/v0/invoke", bytes.NewReader(body))
	req.Header.Set("Authorization", authKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// startModel serves POST /v1/chat/completions with a fixed answer at once,
// on loopback: the platform must admit it (ASSAY_EGRESS_ALLOW=127.0.0.1
// make up), or the runtime's egress policy refuses the call.
func startModel() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	answer := []byte(`{"id":"chatcmpl-bench","object":"chat.completion","created":0,"model":"instant","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Paris"}}],"usage":{"prompt_tokens":12,"completion_tokens":1,"total_tokens":13}}`)
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := time.Now()
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
		modelNanos.Add(int64(time.Since(t)))
		modelCalls.Add(1)
	}))
	return "http://" + ln.Addr().String() + "/v1"
}

func report(name string, r result) {
	d := slices.Clone(r.lat)
	slices.Sort(d)
	p := func(q float64) float64 { return ms(d[min(len(d)-1, int(q*float64(len(d))))]) }
	model := 0.0
	if n := modelCalls.Load(); n > 0 {
		model = float64(modelNanos.Load()) / float64(n) / 1e6
	}
	fmt.Printf("%s\n  n=%d statuses=%v  p50 %.2f ms  p90 %.2f ms  p99 %.2f ms  p99.9 %.2f ms  max %.2f ms  (model server's own time: %.3f ms mean)\n",
		name, len(d), r.status, p(0.50), p(0.90), p(0.99), p(0.999), ms(d[len(d)-1]), model)
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
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, *base+path, bytes.NewReader(raw))
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

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
