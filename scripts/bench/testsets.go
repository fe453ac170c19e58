//go:build ignore

// Testsets load script: uploads 10,000- and 100,000-row CSV files through
// the gateway, retrieves a 10,000-row revision, and reports the times and
// the registry's peak memory. Run against `make up`:
//
//	GOWORK=off go run scripts/bench/testsets.go [-url http://127.0.0.1:8080] [-runs 5]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

var (
	base    = flag.String("url", "http://127.0.0.1:8080", "gateway URL")
	runDir  = flag.String("run", ".run", "the .run folder of `make up` (admin key, registry pid)")
	runs    = flag.Int("runs", 5, "repetitions of each measurement")
	client  = &http.Client{Timeout: 5 * time.Minute}
	authKey string
)

func main() {
	flag.Parse()
	admin, err := os.ReadFile(*runDir + "/admin.key")
	check(err)
	authKey = "ApiKey " + provision(strings.TrimSpace(string(admin)))

	fmt.Printf("machine: %d cores, %s/%s\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
	small, large := csvFile(10_000), csvFile(100_000)
	fmt.Printf("files: 10k rows %.1f MB, 100k rows %.1f MB (5 columns)\n", mb(len(small)), mb(len(large)))

	var revision string
	d := measure(*runs, func() { revision = upload(small) })
	report("upload 10,000 rows (target < 1 s)", d)
	d = measure(max(*runs/2, 2), func() { upload(large) })
	report("upload 100,000 rows (target < 5 s)", d)
	fmt.Printf("registry peak RSS (VmHWM): %s\n", peakRSS())
	d = measure(*runs*4, func() { retrieve(revision) })
	report("retrieve a 10,000-row revision (target < 300 ms)", d)
}

func provision(admin string) string {
	email := fmt.Sprintf("bench-%d@example.com", time.Now().UnixNano())
	body := fmt.Sprintf(`{"accounts":{"bench":{"user":{"email":%q}}}}`, email)
	req, _ := http.NewRequest("POST", *base+"/api/admin/simple/accounts/", strings.NewReader(body))
	req.Header.Set("Authorization", "Access "+admin)
	req.Header.Set("Content-Type", "application/json")
	var out struct {
		Accounts map[string]struct {
			APIKeys struct{ Key string } `json:"api_keys"`
		} `json:"accounts"`
	}
	do(req, &out)
	return out.Accounts["bench"].APIKeys.Key
}

// csvFile makes n rows of 5 columns, about 200 bytes a row.
func csvFile(n int) []byte {
	var b bytes.Buffer
	b.WriteString("question,context,answer,category,difficulty\n")
	for i := range n {
		fmt.Fprintf(&b, "What is the capital of country number %d in the list?,%s,Capital %d,geo-%d,%d\n",
			i, strings.Repeat("ctx", 40), i, i%17, i%5)
	}
	return b.Bytes()
}

func upload(file []byte) string {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	check(w.WriteField("file_type", "csv"))
	fw, err := w.CreateFormFile("file", "bench.csv")
	check(err)
	_, _ = fw.Write(file)
	check(w.Close())
	req, _ := http.NewRequest("POST", *base+"/api/simple/testsets/upload", &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	var out struct {
		Testset struct {
			RevisionID string `json:"revision_id"`
		} `json:"testset"`
	}
	do(req, &out)
	return out.Testset.RevisionID
}

func retrieve(revision string) {
	body := fmt.Sprintf(`{"testset_revision_ref":{"id":%q}}`, revision)
	req, _ := http.NewRequest("POST", *base+"/api/testsets/revisions/retrieve", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	var out struct {
		TestsetRevision struct {
			Data struct {
				Testcases []json.RawMessage `json:"testcases"`
			} `json:"data"`
		} `json:"testset_revision"`
	}
	do(req, &out)
	if len(out.TestsetRevision.Data.Testcases) != 10_000 {
		panic(fmt.Sprintf("retrieved %d testcases, want 10000", len(out.TestsetRevision.Data.Testcases)))
	}
}

func do(req *http.Request, out any) {
	if req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", authKey)
	}
	res, err := client.Do(req)
	check(err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	check(err)
	if res.StatusCode != http.StatusOK {
		panic(fmt.Sprintf("%s %s: %d %s", req.Method, req.URL.Path, res.StatusCode, b[:min(len(b), 300)]))
	}
	check(json.Unmarshal(b, out))
}

func measure(n int, f func()) []time.Duration {
	out := make([]time.Duration, n)
	for i := range n {
		start := time.Now()
		f()
		out[i] = time.Since(start)
	}
	slices.Sort(out)
	return out
}

func report(name string, d []time.Duration) {
	fmt.Printf("%-50s min %7.0f ms  median %7.0f ms  max %7.0f ms  (n=%d)\n", name,
		ms(d[0]), ms(d[len(d)/2]), ms(d[len(d)-1]), len(d))
}

func peakRSS() string {
	pid, err := os.ReadFile(*runDir + "/pids/registry.pid")
	if err != nil {
		return "unknown (no registry pid file)"
	}
	status, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/status")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:"))
		}
	}
	return "unknown"
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func mb(n int) float64            { return float64(n) / (1 << 20) }

func check(err error) {
	if err != nil {
		panic(err)
	}
}
