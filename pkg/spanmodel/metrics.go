package spanmodel

import (
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"golang.org/x/crypto/blake2b"
)

// Price is a model's price in US dollars per million tokens.
type Price struct {
	Input       float64 `json:"input"`
	Output      float64 `json:"output"`
	CachedInput float64 `json:"cached_input"`
}

// Prices maps a model name to its price.
type Prices map[string]Price

//go:embed prices.json
var defaultPrices []byte

// LoadPrices returns the embedded price table with overrides (a JSON object
// of model → {input, output, cached_input}) applied over it.
func LoadPrices(overrides string) (Prices, error) {
	p := Prices{}
	if err := json.Unmarshal(defaultPrices, &p); err != nil {
		return nil, fmt.Errorf("read embedded prices: %w", err)
	}
	if strings.TrimSpace(overrides) != "" {
		var o Prices
		if err := json.Unmarshal([]byte(overrides), &o); err != nil {
			return nil, fmt.Errorf("model prices: %w", err)
		}
		for k, v := range o {
			p[k] = v
		}
	}
	return p, nil
}

// lookup finds a model's price, also when the provider prefixes it
// ("openai/gpt-4o") or a dated suffix follows ("gpt-4o-2024-08-06").
func (p Prices) lookup(model string) (Price, bool) {
	model = strings.ToLower(model)
	if i := strings.LastIndex(model, "/"); i >= 0 {
		model = model[i+1:]
	}
	if pr, ok := p[model]; ok {
		return pr, true
	}
	best := ""
	for k := range p {
		if strings.HasPrefix(model, k+"-") && len(k) > len(best) {
			best = k
		}
	}
	pr, ok := p[best]
	return pr, ok && best != ""
}

var costTypes = map[string]bool{"embedding": true, "query": true, "completion": true, "chat": true, "rerank": true, "llm": true}

// cost fills in tokens.incremental.total and, for model calls with a known
// model, costs.incremental from the price table.
func (p Prices) cost(spanType string, ag map[string]any) {
	tokens, _ := get(ag, "metrics.tokens.incremental")
	tm, ok := tokens.(map[string]any)
	if !ok {
		return
	}
	prompt, _ := num(tm["prompt"])
	completion, _ := num(tm["completion"])
	if _, ok := tm["total"]; !ok && (prompt != 0 || completion != 0) {
		tm["total"] = prompt + completion
	}
	if !costTypes[spanType] {
		return
	}
	if c, ok := get(ag, "metrics.costs.incremental"); ok {
		if _, ok := c.(map[string]any); ok {
			return // costs the client sent (Langfuse's cost_details) win over the table
		}
	}
	var model string
	for _, path := range []string{"meta.response.model", "meta.request.model", "data.parameters.model"} {
		if v, ok := get(ag, path); ok {
			if s, ok := v.(string); ok && s != "" {
				model = s
				break
			}
		}
	}
	price, ok := p.lookup(model)
	if !ok {
		return
	}
	cached, _ := num(tm["cache_read"])
	if c, ok := num(tm["cached"]); ok && cached == 0 {
		cached = c
	}
	if cached > prompt {
		cached = prompt
	}
	pc := ((prompt-cached)*price.Input + cached*price.CachedInput) / 1e6
	cc := completion * price.Output / 1e6
	sub(nil, ag, "metrics", "costs")["incremental"] = map[string]any{"prompt": pc, "completion": cc, "total": pc + cc}
}

// RollUp sets the cumulative tokens, costs and errors of every span to its
// own incremental values plus its children's cumulative ones, per trace.
// A span whose parent is not among spans is treated as a root, so partial
// trees (spans of one trace sent in several requests) still get values; the
// query side rolls up again over the whole stored trace.
func RollUp(spans []*Span) {
	type id struct{ trace, span string }
	byID := make(map[id]*Span, len(spans))
	children := map[id][]*Span{}
	for _, s := range spans {
		byID[id{s.TraceID, s.SpanID}] = s
	}
	var roots []*Span
	for _, s := range spans {
		if p := (id{s.TraceID, s.ParentID}); s.ParentID != "" && byID[p] != nil && s.ParentID != s.SpanID {
			children[p] = append(children[p], s)
		} else {
			roots = append(roots, s)
		}
	}
	done := make(map[*Span]bool, len(spans))
	var walk func(s *Span) rolled
	walk = func(s *Span) rolled {
		done[s] = true
		own := ownMetrics(s)
		for _, c := range children[id{s.TraceID, s.SpanID}] {
			if !done[c] { // a cycle in bad input stops here
				own.add(walk(c))
			}
		}
		own.write(s)
		return own
	}
	for _, r := range roots {
		walk(r)
	}
}

// reuse is v as an attribute value: m[k] itself when it holds v already
// (a span without children sums to its own values), so that it is not
// boxed again.
func reuse(m map[string]any, k string, v float64) any {
	if old, ok := m[k]; ok {
		if f, ok := old.(float64); ok && f == v && math.Signbit(f) == math.Signbit(v) {
			return old
		}
	}
	return v
}

var rollKeys = [3]string{"prompt", "completion", "total"}

// rollNames are the dict metrics rolled up, in rolled.dicts order.
var rollNames = [2]string{"tokens", "costs"}

type rolled struct {
	dicts  [2][3]float64 // tokens, costs × rollKeys
	errors float64
}

func ownMetrics(s *Span) rolled {
	var r rolled
	metrics, _ := get(s.Attributes, "ag.metrics")
	mm, _ := metrics.(map[string]any)
	for i, name := range rollNames {
		d, _ := mm[name].(map[string]any)
		m, _ := d["incremental"].(map[string]any)
		for j, k := range rollKeys {
			r.dicts[i][j], _ = num(m[k])
		}
	}
	e, _ := mm["errors"].(map[string]any)
	r.errors, _ = num(e["incremental"])
	return r
}

func (r *rolled) add(o rolled) {
	for i := range r.dicts {
		for j := range r.dicts[i] {
			r.dicts[i][j] += o.dicts[i][j]
		}
	}
	r.errors += o.errors
}

func (r rolled) write(s *Span) {
	ag := sub(s.arena, s.Attributes, "ag")
	metrics, _ := ag["metrics"].(map[string]any)
	if metrics == nil {
		metrics = s.arena.obj()
	}
	for i, name := range rollNames {
		vals := r.dicts[i]
		m, _ := metrics[name].(map[string]any)
		if vals != [3]float64{} {
			if m == nil {
				m = s.arena.obj()
				metrics[name] = m
			}
			inc, _ := m["incremental"].(map[string]any)
			c := s.arena.obj()
			c[rollKeys[0]] = reuse(inc, rollKeys[0], vals[0])
			c[rollKeys[1]] = reuse(inc, rollKeys[1], vals[1])
			c[rollKeys[2]] = reuse(inc, rollKeys[2], vals[2])
			m["cumulative"] = c
		} else if m != nil {
			delete(m, "cumulative")
		}
	}
	if e, ok := metrics["errors"].(map[string]any); ok || r.errors != 0 {
		if !ok {
			e = s.arena.obj()
			metrics["errors"] = e
		}
		if r.errors != 0 {
			e["cumulative"] = r.errors
		} else {
			delete(e, "cumulative")
		}
	}
	if len(metrics) > 0 {
		ag["metrics"] = metrics
	}
}

// CacheHash is the evaluation-cache hash (reference §2.5) a root span with
// refs and links is stored with, "" when there is none: the evaluation
// worker computes it before running a cell to find an earlier trace with
// the same hash, so it must be this very function, over ids normalised as
// the normaliser stores them (dashed reference ids, hex trace and span ids).
func CacheHash(refs []Reference, links []Link) string {
	refs = slices.Clone(refs)
	for i, r := range refs {
		if h, err := hexID(r.ID); err == nil && len(h) == 32 {
			refs[i].ID = h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
		}
	}
	links = slices.Clone(links)
	for i, l := range links {
		if t, err := TraceID(l.TraceID); err == nil {
			links[i].TraceID = t
		}
		if s, err := SpanID(l.SpanID); err == nil {
			links[i].SpanID = s
		}
	}
	if h := hashes(refs, links); len(h) > 0 {
		return h[0].ID
	}
	return ""
}

// hashes is the evaluation-cache hash of a span's references and keyed
// links: blake2b-128 over the compact sorted JSON, as the reference does.
func hashes(refs []Reference, links []Link) []Hash {
	if len(refs) == 0 && len(links) == 0 {
		return nil
	}
	payload := map[string]any{}
	for _, r := range refs {
		if r.Key == "testset_variant" || r.Key == "testset_revision" {
			continue
		}
		m := map[string]any{}
		putStr(m, "id", r.ID)
		putStr(m, "slug", r.Slug)
		putStr(m, "version", r.Version)
		payload[r.Key] = m
	}
	for _, l := range links {
		if l.Key != "" {
			payload[l.Key] = map[string]any{"span_id": l.SpanID, "trace_id": l.TraceID}
		}
	}
	if len(payload) == 0 {
		return nil
	}
	b := sortedJSON(payload)
	h, _ := blake2b.New(16, nil)
	h.Write(b)
	return []Hash{{ID: hex.EncodeToString(h.Sum(nil)), Key: "indirect"}}
}

func putStr(m map[string]any, k, v string) {
	if v != "" {
		m[k] = v
	}
}

// sortedJSON is json.dumps(v, sort_keys=True) with every space removed.
func sortedJSON(v any) []byte {
	b, _ := json.Marshal(v) // encoding/json sorts map keys
	return []byte(strings.ReplaceAll(string(b), " ", ""))
}
