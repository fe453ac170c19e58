package spanmodel

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/blake2b"

	"github.com/assayhq/assay/pkg/prices"
)

// Price is a model's price in US dollars per million tokens, as
// TRACING_MODEL_PRICES (and RUNTIME_MODEL_PRICES) give it.
type Price struct {
	Input       float64 `json:"input"`
	Output      float64 `json:"output"`
	CachedInput float64 `json:"cached_input"`
}

// Prices prices model calls: the operator's overrides first, then the
// vendored genai-prices table (pkg/prices). A nil *Prices prices nothing.
type Prices struct {
	overrides map[string]Price
	table     *prices.Table
	source    any // table.Source, boxed once
}

// LoadPrices returns the vendored price table with overrides (a JSON
// object of model → {input, output, cached_input}) checked before it.
func LoadPrices(overrides string) (*Prices, error) {
	t, err := prices.Default()
	if err != nil {
		return nil, fmt.Errorf("read embedded prices: %w", err)
	}
	p := &Prices{table: t, source: t.Source}
	if strings.TrimSpace(overrides) != "" {
		if err := json.Unmarshal([]byte(overrides), &p.overrides); err != nil {
			return nil, fmt.Errorf("model prices: %w", err)
		}
		o := make(map[string]Price, len(p.overrides))
		for k, v := range p.overrides {
			o[strings.ToLower(k)] = v
		}
		p.overrides = o
	}
	return p, nil
}

// override finds a model's override, also when the provider prefixes it
// ("openai/gpt-4o") or a dated suffix follows ("gpt-4o-2024-08-06").
func (p *Prices) override(model string) (Price, bool) {
	if len(p.overrides) == 0 {
		return Price{}, false
	}
	model = strings.ToLower(model)
	if i := strings.LastIndex(model, "/"); i >= 0 {
		model = model[i+1:]
	}
	if pr, ok := p.overrides[model]; ok {
		return pr, true
	}
	best := ""
	for k := range p.overrides {
		if strings.HasPrefix(model, k+"-") && len(k) > len(best) {
			best = k
		}
	}
	pr, ok := p.overrides[best]
	return pr, ok && best != ""
}

var costTypes = map[string]bool{"embedding": true, "query": true, "completion": true, "chat": true, "rerank": true, "llm": true}

// PricingOverride is ag.meta.pricing.source for a span priced by an
// operator's override.
const PricingOverride = "override"

// cost fills in tokens.incremental.total and, for model calls, the costs
// and ag.meta.pricing: the source that priced the call, or unpriced=true
// and the model when no source knows the model (the console says so rather
// than showing a cost of zero). at is the call's time, for dated prices.
func (p *Prices) cost(a *Arena, spanType string, ag map[string]any, at time.Time) {
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
	if !costTypes[spanType] || p == nil {
		return
	}
	if c, ok := get(ag, "metrics.costs.incremental"); ok {
		if _, ok := c.(map[string]any); ok {
			return // costs the client sent (Langfuse's cost_details) win over the table
		}
	}
	model := agString(ag, "meta.response.model", "meta.request.model", "data.parameters.model")
	if model == "" {
		return
	}
	cacheRead, _ := num(tm["cache_read"])
	if c, ok := num(tm["cached"]); ok && cacheRead == 0 {
		cacheRead = c
	}
	cacheWrite, _ := num(tm["cache_creation"])
	if price, ok := p.override(model); ok {
		cached := min(cacheRead, prompt)
		pc := ((prompt-cached)*price.Input + cached*price.CachedInput) / 1e6
		cc := completion * price.Output / 1e6
		costs := a.obj()
		costs["prompt"], costs["completion"], costs["total"] = pc, cc, pc+cc
		sub(a, ag, "metrics", "costs")["incremental"] = costs
		pricing := a.obj()
		pricing["source"] = PricingOverride
		sub(a, ag, "meta")["pricing"] = pricing
		return
	}
	provider := agString(ag, "meta.provider.name", "meta.provider", "meta.system")
	baseURL := agString(ag, "meta.request.base_url")
	pp, m := p.table.Resolve(prices.Span{Provider: provider, BaseURL: baseURL, Model: model})
	if m == nil {
		pricing := a.obj()
		pricing["unpriced"], pricing["model"] = true, model
		sub(a, ag, "meta")["pricing"] = pricing
		return
	}
	// The table's input_tokens include cache reads and writes (as OTel's
	// gen_ai.usage.input_tokens does); a source that counts more cached
	// than input tokens has not, so the cached ones are the input then.
	input := max(prompt, cacheRead+cacheWrite)
	u := prices.Usage{"input_tokens": input, "output_tokens": completion}
	if cacheRead > 0 {
		u["cache_read_tokens"] = cacheRead
	}
	if cacheWrite > 0 {
		u["cache_write_tokens"] = cacheWrite
	}
	r, ok, err := p.table.Price(u, pp, m, at)
	if !ok || err != nil { // only for usage that is not a finite count
		return
	}
	costs := a.obj()
	costs["prompt"], costs["completion"], costs["total"] = r.InputPrice, r.OutputPrice, r.TotalPrice
	sub(a, ag, "metrics", "costs")["incremental"] = costs
	pricing := a.obj()
	pricing["source"], pricing["provider"], pricing["model"] = p.source, pp.IDValue(), m.IDValue()
	sub(a, ag, "meta")["pricing"] = pricing
}

// agString is the first non-empty string at one of the dotted paths.
func agString(ag map[string]any, paths ...string) string {
	for _, path := range paths {
		if v, ok := get(ag, path); ok {
			if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
				return s
			}
		}
	}
	return ""
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

// CacheHash is the evaluation-cache hash (the compatible platform's derived
// hash field) a root span with refs and links is stored with, "" when there is
// none: the evaluation worker computes it before running a cell to find an
// earlier trace with the same hash, so it must be this very function, over ids
// normalised as the normaliser stores them (dashed reference ids, hex trace and
// span ids).
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
// links: blake2b-128 over the compact sorted JSON, as the compatible platform does.
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

// CallCost is what one model call costs in USD by the prices a span of
// it would get (the overrides, then the table): the runtime's model-call
// cache reports the cost a cached answer saved with it. ok is false for a
// model no source prices.
func (p *Prices) CallCost(provider, model string, prompt, completion float64, at time.Time) (cost float64, ok bool) {
	if p == nil || model == "" {
		return 0, false
	}
	ag := map[string]any{
		"metrics": map[string]any{"tokens": map[string]any{"incremental": map[string]any{"prompt": prompt, "completion": completion}}},
		"meta":    map[string]any{"response": map[string]any{"model": model}, "provider": provider},
	}
	p.cost(nil, "chat", ag, at)
	v, found := get(ag, "metrics.costs.incremental.total")
	if !found {
		return 0, false
	}
	return num(v)
}
