package llm

import (
	"strings"
	"testing"

	"github.com/assayhq/assay/pkg/config"
)

func TestURLMapFromTheEnvironment(t *testing.T) {
	t.Setenv("LLMT_TIMEOUT", "5s")
	t.Setenv("LLMT_BASE_URLS", " openai=http://127.0.0.1:9999/v1, together=https://proxy.example:8443/together/v1 ,")
	var cfg Config
	if err := config.Load("LLMT", &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Timeout.Seconds() != 5 || len(cfg.BaseURLs) != 2 || cfg.BaseURLs["openai"] != "http://127.0.0.1:9999/v1" ||
		cfg.BaseURLs["together_ai"] != "https://proxy.example:8443/together/v1" {
		t.Fatalf("cfg = %+v", cfg)
	}
}

func TestURLMapRefusals(t *testing.T) {
	for in, want := range map[string]string{
		"openai":                          "not family=url",
		"cohere=https://x":                "unknown provider family",
		"openai=https://a,openai=https:/": "given twice",
		"openai=ftp://x":                  "not an absolute http(s) URL",
		"openai=/v1":                      "not an absolute http(s) URL",
		"openai=HTTP://":                  "not an absolute http(s) URL",
		strings.Repeat("x", maxURLMap+1):  "longer than",
	} {
		var m URLMap
		if err := m.Decode(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40q: %v, want %q", in, err, want)
		}
	}
}

// FuzzURLMap: Decode never panics, and what it accepts is known families
// with absolute http(s) URLs.
func FuzzURLMap(f *testing.F) {
	f.Add("openai=http://127.0.0.1:9999/v1,anthropic=https://a/v1/")
	f.Add("=,==,openai==http://x")
	f.Add("google=https://g/v1beta/openai/, azure=https://r.openai.azure.com")
	f.Fuzz(func(t *testing.T, s string) {
		var m URLMap
		if m.Decode(s) != nil {
			return
		}
		for fam, u := range m {
			if _, ok := presets[fam]; !ok || !(strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")) {
				t.Fatalf("%q accepted %q=%q", s, fam, u)
			}
		}
	})
}

// A scheme in capitals is accepted, as url.Parse reads it, and kept in
// lower case: the fuzzer found "google=hTtp://0" stored as given.
func TestURLMapLowersTheScheme(t *testing.T) {
	var m URLMap
	if err := m.Decode("google=hTtp://0,openai=HTTPS://Proxy:8443/v1"); err != nil {
		t.Fatal(err)
	}
	if m["gemini"] != "http://0" || m["openai"] != "https://Proxy:8443/v1" {
		t.Fatalf("m = %v", m)
	}
}
