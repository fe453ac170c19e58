package sdkcompat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assayhq/assay/pkg/testutil/platformtest"
)

// sdk is one Node project under testdata/, installed from its lock file.
type sdk struct {
	// Dir is the project's folder name under testdata/.
	Dir string
}

// env is what every script is given: where to export spans and with which
// key, and the OpenAI-compatible model server to call.
type env struct {
	// OTLPURL is the gateway's OTLP/HTTP traces endpoint.
	OTLPURL string
	// BaseURL is the gateway's origin (for SDKs that build their own path).
	BaseURL string
	// APIKey is a project API key (without the "ApiKey " scheme).
	APIKey string
	// LLMURL is the model server's OpenAI base URL, ending in /v1.
	LLMURL string
}

// install runs `npm ci` in the project folder unless node_modules is
// already newer than its lock file. A machine without npm fails the test:
// these flows are part of what CI proves.
func (s sdk) install(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", s.Dir))
	if err != nil {
		t.Fatal(err)
	}
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatalf("sdkcompat: %s has no package-lock.json: %v", s.Dir, err)
	}
	if mods, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err == nil && mods.ModTime().After(lock.ModTime()) {
		return dir
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sdkcompat: npm ci in %s: %v\n%s", s.Dir, err, out)
	}
	return dir
}

// run installs the project and runs `node script` in it with e's settings
// (ASSAY_OTLP_URL, ASSAY_BASE_URL, ASSAY_API_KEY, OPENAI_BASE_URL,
// OPENAI_API_KEY) plus extra "K=V" pairs, and decodes the JSON object the
// script prints last on stdout (by convention {"trace_ids": [...], ...}).
func (s sdk) run(t *testing.T, script string, e env, extra ...string) map[string]any {
	t.Helper()
	dir := s.install(t)
	cmd := exec.Command("node", script)
	cmd.Dir = dir
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"ASSAY_OTLP_URL=" + e.OTLPURL, "ASSAY_BASE_URL=" + e.BaseURL, "ASSAY_API_KEY=" + e.APIKey,
		"OPENAI_BASE_URL=" + e.LLMURL, "OPENAI_API_KEY=sk-sdkcompat",
	}, extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("sdkcompat: node %s/%s: %v\nstdout: %s\nstderr: %s", s.Dir, script, err, stdout.Bytes(), stderr.Bytes())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var out map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &out); err != nil {
		t.Fatalf("sdkcompat: node %s/%s printed no JSON object last: %v\nstdout: %s\nstderr: %s", s.Dir, script, err, stdout.Bytes(), stderr.Bytes())
	}
	return out
}

// platform starts the whole platform and provisions one project.
func platform(t *testing.T) (*platformtest.Platform, env) {
	t.Helper()
	p := platformtest.Start(t)
	key := p.Account(t, strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))+"@sdkcompat.test")
	return p, env{OTLPURL: p.URL + "/api/otlp/v1/traces", BaseURL: p.URL, APIKey: key, LLMURL: p.LLM.URL}
}

// trace polls GET /api/traces/{id} until the trace holds at least min
// spans (the writer stores asynchronously) and returns them flat, each the
// span as the API answers it. It fails the test after 30 s.
func trace(t *testing.T, p *platformtest.Platform, key, traceID string, min int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last []byte
	for {
		status, body := p.Do(t, "GET", "/api/traces/"+traceID, "ApiKey "+key, nil)
		last = body
		if status == 200 {
			var out struct {
				Trace struct {
					Spans json.RawMessage `json:"spans"`
				} `json:"trace"`
			}
			if err := json.Unmarshal(body, &out); err != nil {
				t.Fatalf("sdkcompat: trace %s: %v: %s", traceID, err, body)
			}
			if spans := flatten(out.Trace.Spans); len(spans) >= min {
				return spans
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("sdkcompat: trace %s: fewer than %d spans after 30 s; last answer %d %s", traceID, min, status, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// flatten turns a span tree (a list, or an object keyed by span name, each
// span's children under "spans") into a flat list in depth-first order.
func flatten(raw json.RawMessage) []map[string]any {
	var list []map[string]any
	if json.Unmarshal(raw, &list) != nil {
		var byName map[string]json.RawMessage
		if json.Unmarshal(raw, &byName) != nil {
			return nil
		}
		for _, v := range byName {
			var one map[string]any
			var same []map[string]any // siblings of one name: a list
			if json.Unmarshal(v, &one) == nil {
				list = append(list, one)
			} else if json.Unmarshal(v, &same) == nil {
				// Their children are flattened below, once.
				list = append(list, same...)
			}
		}
	}
	var out []map[string]any
	for _, s := range list {
		out = append(out, s)
		if kids, ok := s["spans"]; ok {
			b, _ := json.Marshal(kids)
			out = append(out, flatten(b)...)
		}
	}
	return out
}

// attr reads a dotted path ("ag.data.outputs") under a span's attributes,
// walking nested objects; the second result says whether it was there.
func attr(span map[string]any, path string) (any, bool) {
	var cur any = span["attributes"]
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// byName returns the spans whose span_name is name.
func byName(spans []map[string]any, name string) []map[string]any {
	var out []map[string]any
	for _, s := range spans {
		if s["span_name"] == name {
			out = append(out, s)
		}
	}
	return out
}

// dump is a span list as indented JSON, for failure messages.
func dump(spans []map[string]any) string {
	b, _ := json.MarshalIndent(spans, "", "  ")
	return fmt.Sprintf("%s", b)
}
