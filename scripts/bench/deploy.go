//go:build ignore

// Deployed-configuration poll load script: external runtimes retrieve the
// revision an environment deploys on every request. This
// provisions an account (seeded with development/staging/production),
// creates and deploys an application, then polls
// POST /api/applications/revisions/retrieve {environment_ref, key} through
// the gateway at a fixed arrival rate (open loop: requests start on
// schedule whether or not earlier ones have finished) and reports latency
// percentiles for the full answer and for the 304 answer to If-None-Match.
// Target: p99 < 10 ms at 200 requests/s. Run against `make up`:
//
//	GOWORK=off go run scripts/bench/deploy.go [-url http://127.0.0.1:8080] [-rate 200] [-seconds 30]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

var (
	base    = flag.String("url", "http://127.0.0.1:8080", "gateway URL")
	runDir  = flag.String("run", ".run", "the .run folder of `make up` (admin key)")
	adminF  = flag.String("admin", "", "admin key (default: <run>/admin.key)")
	rate    = flag.Int("rate", 200, "requests per second")
	seconds = flag.Int("seconds", 30, "duration of each measured phase")
	client  = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 512, MaxConnsPerHost: 0}}
	authKey string
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
	fmt.Printf("machine: %d cores, %s/%s; %d req/s for %d s per phase\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, *rate, *seconds)

	var app struct {
		Application struct {
			ID         string `json:"id"`
			RevisionID string `json:"revision_id"`
		} `json:"application"`
	}
	call("POST", "/api/simple/applications/", map[string]any{"application": map[string]any{"slug": "bench-bot",
		"data": map[string]any{"uri": "svc:builtin:chat:v0", "parameters": map[string]any{"prompt": map[string]any{
			"messages": []any{map[string]any{"role": "system", "content": "You answer briefly."}}, "llm_config": map[string]any{"model": "gpt-4o-mini"}}}}}}, &app)
	call("POST", "/api/applications/revisions/deploy", map[string]any{"application_ref": map[string]any{"id": app.Application.ID},
		"environment_ref": map[string]any{"slug": "production"}}, nil)

	body := []byte(`{"environment_ref":{"slug":"production"},"key":"bench-bot.revision"}`)
	status, tag := poll(body, "")
	if status != 200 || tag == "" {
		fmt.Fprintf(os.Stderr, "retrieve answered %d (etag %q)\n", status, tag)
		os.Exit(1)
	}
	run("warm-up (not reported)", body, "", 200, 3)
	report("retrieve by environment + key, full answer (target p99 < 10 ms)", run("", body, "", *rate, *seconds))
	report("retrieve by environment + key, If-None-Match -> 304", run("", body, tag, *rate, *seconds))
}

type result struct {
	lat    []time.Duration
	status map[int]int
	late   int
}

// run sends rate requests/s for secs seconds on a fixed schedule.
func run(_ string, body []byte, inm string, rate, secs int) result {
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
			// Latency counts from the scheduled start, so a stalled
			// server is not hidden by the load generator waiting for it.
			statuses[i], _ = poll(body, inm)
			res.lat[i] = time.Since(at)
		}()
	}
	wg.Wait()
	for _, s := range statuses {
		res.status[s]++
	}
	return res
}

func poll(body []byte, inm string) (int, string) {
	req, _ := http.NewRequest("POST", *base+"/api/applications/revisions/retrieve", bytes.NewReader(body))
	req.Header.Set("Authorization", authKey)
	req.Header.Set("Content-Type", "application/json")
	if inm != "" {
		req.Header.Set("If-None-Match", inm)
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, ""
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, res.Header.Get("ETag")
}

func report(name string, r result) {
	d := slices.Clone(r.lat)
	slices.Sort(d)
	p := func(q float64) float64 { return ms(d[min(len(d)-1, int(q*float64(len(d))))]) }
	fmt.Printf("%s\n  n=%d statuses=%v  p50 %.2f ms  p90 %.2f ms  p99 %.2f ms  p99.9 %.2f ms  max %.2f ms\n",
		name, len(d), r.status, p(0.50), p(0.90), p(0.99), p(0.999), ms(d[len(d)-1]))
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
	if res.StatusCode != 200 {
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
