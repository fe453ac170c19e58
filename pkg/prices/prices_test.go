package prices

import (
	"encoding/json"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

func table(t testing.TB) *Table {
	t.Helper()
	tb, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// TestGolden prices testdata/cases.json and compares with what
// @pydantic/genai-prices answered for them (testdata/golden.json, written
// by scripts/update-prices.sh with the package itself).
func TestGolden(t *testing.T) {
	tb := table(t)
	var cases []struct {
		Name     string
		Model    string
		Provider string
		APIURL   string `json:"api_url"`
		Time     string
		Usage    Usage
	}
	var golden []struct {
		Name                                string
		Provider, Model, Error              string
		InputPrice, OutputPrice, TotalPrice float64  `json:"-"`
		Input                               *float64 `json:"input_price"`
		Output                              *float64 `json:"output_price"`
		Total                               *float64 `json:"total_price"`
	}
	readJSON(t, "testdata/cases.json", &cases)
	readJSON(t, "testdata/golden.json", &golden)
	if len(cases) != len(golden) {
		t.Fatalf("%d cases, %d golden answers: rerun scripts/update-prices.sh", len(cases), len(golden))
	}
	for i, c := range cases {
		g := golden[i]
		t.Run(c.Name, func(t *testing.T) {
			if g.Name != c.Name {
				t.Fatalf("golden answer %d is for %q", i, g.Name)
			}
			at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
			if c.Time != "" {
				at, _ = time.Parse(time.RFC3339, c.Time)
			}
			r, ok, err := tb.Calc(c.Usage, c.Model, Options{ProviderID: c.Provider, APIURL: c.APIURL, Time: at})
			switch {
			case g.Error != "":
				if err == nil {
					t.Fatalf("priced %+v, want the error %q", r, g.Error)
				}
				return
			case err != nil:
				t.Fatal(err)
			case g.Total == nil:
				if ok {
					t.Fatalf("priced %s/%s at %v, want no price", r.Provider.ID, r.Model.ID, r.TotalPrice)
				}
				return
			case !ok:
				t.Fatalf("no price, want %s/%s at %v", g.Provider, g.Model, *g.Total)
			}
			if r.Provider.ID != g.Provider || r.Model.ID != g.Model {
				t.Errorf("priced as %s/%s, want %s/%s", r.Provider.ID, r.Model.ID, g.Provider, g.Model)
			}
			if r.InputPrice != *g.Input || r.OutputPrice != *g.Output || r.TotalPrice != *g.Total {
				t.Errorf("prices %v + %v = %v, want %v + %v = %v", r.InputPrice, r.OutputPrice, r.TotalPrice, *g.Input, *g.Output, *g.Total)
			}
		})
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

// The two examples worked out by hand in the compatibility reference.
func TestReferenceExamples(t *testing.T) {
	tb := table(t)
	r, ok, err := tb.Calc(Usage{"input_tokens": 1000, "cache_read_tokens": 200, "output_tokens": 100}, "gpt-4o-mini", Options{ProviderID: "openai"})
	if err != nil || !ok || !near(r.TotalPrice, 0.000195) {
		t.Errorf("gpt-4o-mini with 200 cached of 1000: %v %v %v, want $0.000195", r.TotalPrice, ok, err)
	}
	u := Usage{"input_tokens": 300000, "output_tokens": 1000}
	for at, want := range map[string]float64{"2026-03-12T23:59:59Z": 1.8225, "2026-03-13T00:00:00Z": 0.915} {
		tm, _ := time.Parse(time.RFC3339, at)
		r, ok, err := tb.Calc(u, "claude-sonnet-4-6", Options{ProviderID: "anthropic", Time: tm})
		if err != nil || !ok || !near(r.TotalPrice, want) {
			t.Errorf("claude-sonnet-4-6, 300k in, at %s: %v %v %v, want $%v", at, r.TotalPrice, ok, err, want)
		}
	}
}

// deepseek-chat is cheaper off-peak, in a window that wraps midnight UTC
// (16:30 to 00:30, written as the peak entry 00:30–16:30 after the
// off-peak default).
func TestTimeOfDay(t *testing.T) {
	tb := table(t)
	u := Usage{"input_tokens": 1_000_000}
	price := func(hhmmss string) float64 {
		tm, _ := time.Parse(time.RFC3339, "2026-05-01T"+hhmmss+"Z")
		r, ok, err := tb.Calc(u, "deepseek-chat", Options{ProviderID: "deepseek", Time: tm})
		if err != nil || !ok {
			t.Fatalf("deepseek-chat at %s: %v %v", hhmmss, ok, err)
		}
		return r.TotalPrice
	}
	for hms, want := range map[string]float64{"00:29:59": 0.135, "00:30:00": 0.27, "12:00:00": 0.27, "16:29:59": 0.27, "16:30:00": 0.135, "23:00:00": 0.135} {
		if got := price(hms); !near(got, want) {
			t.Errorf("at %s: $%v, want $%v", hms, got, want)
		}
	}
	c := &Constraint{Type: "time_of_date", StartTime: "22:00:00+02:00", EndTime: "02:00:00Z"}
	if err := c.compile(); err != nil {
		t.Fatal(err)
	}
	for hms, want := range map[string]bool{"19:59:59": false, "20:00:00": true, "23:59:59": true, "01:59:59": true, "02:00:00": false} {
		tm, _ := time.Parse(time.RFC3339, "2026-05-01T"+hms+"Z")
		if got := c.holds(tm); got != want {
			t.Errorf("22:00+02:00–02:00Z at %s UTC: %v, want %v", hms, got, want)
		}
	}
}

func TestDatedPrice(t *testing.T) {
	tb := table(t)
	u := Usage{"input_tokens": 1_000_000}
	at := func(s string) float64 {
		tm, _ := time.Parse(time.RFC3339, s)
		r, ok, err := tb.Calc(u, "deepseek-v4-flash", Options{ProviderID: "deepseek", Time: tm})
		if err != nil || !ok {
			t.Fatalf("deepseek-v4-flash at %s: %v %v", s, ok, err)
		}
		return r.TotalPrice
	}
	if got := at("2026-08-16T12:00:00Z"); !near(got, 0.14) {
		t.Errorf("before 2026-08-17: $%v, want $0.14", got)
	}
	if got := at("2026-08-17T12:00:00Z"); !near(got, 0.22) {
		t.Errorf("from 2026-08-17: $%v, want $0.22", got)
	}
}

// TestEveryPriceKeyKnown fails when a refresh of the data brings a price
// key (a unit) the Go code does not know: pricing around it would leave
// that part of a call unpriced. Add the unit to units.go from the
// package's unit registry.
func TestEveryPriceKeyKnown(t *testing.T) {
	b, err := os.ReadFile("data/genai-prices.json")
	if err != nil {
		t.Fatal(err)
	}
	keys := regexp.MustCompile(`"([a-z0-9_]+_(?:mtok|kcount|hours|kpages|mchars|gpixels))"`).FindAllSubmatch(b, -1)
	if len(keys) == 0 {
		t.Fatal("no price keys found in the data")
	}
	for _, k := range keys {
		if unitsByPriceKey[string(k[1])] == nil {
			t.Errorf("price key %s is not in units.go", k[1])
		}
	}
	_, err = Load([]byte(`[{"id":"x","name":"x","api_pattern":"x","models":[{"id":"m","match":{"equals":"m"},"prices":{"input_mtok":1,"input_smell_mtok":2}}]}]`))
	if err == nil || !strings.Contains(err.Error(), "input_smell_mtok") {
		t.Errorf("data with an unknown price key loads (error %v), want an error naming it", err)
	}
}

func TestRewriteDates(t *testing.T) {
	for in, want := range map[string]string{
		"claude-sonnet-4-20250514": "claude-sonnet-4-2025-05-14",
		"x-20250230":               "x-20250230", // no such day
		"x-20251301-y":             "x-20251301-y",
		"a-20240101:0":             "a-2024-01-01:0",
		"a-20240101b":              "a-20240101b",
		"a-20240101-20250202":      "a-2024-01-01-2025-02-02",
		"gpt-4o":                   "gpt-4o",
	} {
		if got := rewriteDates(in); got != want {
			t.Errorf("rewriteDates(%q) = %q, want %q", in, got, want)
		}
	}
}

// Resolve is lenient where tracing clients send provider strings of their
// own; Calc is not.
func TestResolve(t *testing.T) {
	tb := table(t)
	for _, c := range []struct {
		s               Span
		provider, model string
	}{
		{Span{Provider: "langchain", Model: "gpt-4o"}, "openai", "gpt-4o"},
		{Span{Provider: "openai.chat", Model: "gpt-5-mini"}, "openai", "gpt-5-mini"},
		{Span{BaseURL: "http://localhost:4000/v1", Model: "gpt-4o-mini"}, "openai", "gpt-4o-mini"},
		{Span{Model: "openai/gpt-4o"}, "openai", "gpt-4o"},
		{Span{Provider: "openai", Model: "claude-3-5-sonnet-20241022"}, "anthropic", "claude-3-5-sonnet"},
		{Span{Model: "text-embedding-3-small"}, "openai", "text-embedding-3-small"},
		{Span{Model: "mistral-small"}, "openrouter", "mistral-small"},
		{Span{Provider: "openai", Model: "my-fine-tune"}, "", ""},
		{Span{Model: "my-fine-tune"}, "", ""},
		{Span{Model: ""}, "", ""},
	} {
		p, m := tb.Resolve(c.s)
		var gp, gm string
		if p != nil && m != nil {
			gp, gm = p.ID, m.ID
		}
		if gp != c.provider || gm != c.model {
			t.Errorf("Resolve(%+v) = %s/%s, want %s/%s", c.s, gp, gm, c.provider, c.model)
		}
		if p2, m2 := tb.Resolve(c.s); p2 != p || m2 != m {
			t.Errorf("Resolve(%+v) again: another answer", c.s)
		}
	}
}

func BenchmarkPriceSpan(b *testing.B) {
	tb := table(b)
	at := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		p, m := tb.Resolve(Span{Provider: "anthropic", Model: "claude-sonnet-4-20250514"})
		if _, ok, err := tb.Price(Usage{"input_tokens": 1200, "cache_read_tokens": 300, "output_tokens": 80}, p, m, at); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := Load(embedded); err != nil {
			b.Fatal(err)
		}
	}
}

// Every model of the 29-model table this data replaced is still priced
// from its name alone (spans often carry no provider).
func TestOldTableModelsStillPriced(t *testing.T) {
	tb := table(t)
	for _, model := range []string{"gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "gpt-4-turbo", "gpt-4",
		"gpt-3.5-turbo", "o1", "o1-mini", "o3", "o3-mini", "o4-mini", "text-embedding-3-small", "text-embedding-3-large",
		"claude-3-5-sonnet", "claude-3-7-sonnet", "claude-sonnet-4", "claude-3-5-haiku", "claude-3-haiku", "claude-3-opus",
		"claude-opus-4", "gemini-1.5-flash", "gemini-1.5-pro", "gemini-2.0-flash", "gemini-2.5-flash", "gemini-2.5-pro",
		"mistral-large", "mistral-small", "gpt-5-mini", "gpt-4o-2024-08-06", "claude-sonnet-4-20250514"} {
		if _, m := tb.Resolve(Span{Model: model}); m == nil {
			t.Errorf("%s has no price", model)
		}
	}
}
