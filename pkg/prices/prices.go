// Package prices prices model calls with the vendored data of the npm
// package @pydantic/genai-prices (data/, refreshed by
// scripts/update-prices.sh, MIT licensed: data/LICENSE). It reproduces the
// package's calcPrice: usage keys and their hierarchy (cache reads and
// writes are parts of input_tokens, priced at their own rate, the rest at
// the input rate), tiers chosen by the request's total input tokens, dated
// and time-of-day prices, and its provider and model lookup. The rules are
// checked against answers of the package itself (testdata/golden.json).
package prices

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

//go:embed data/genai-prices.json
var embedded []byte

//go:embed data/SOURCE
var sourceFile string

// Usage is what a call used, by usage key (input_tokens, output_tokens,
// cache_read_tokens, cache_write_tokens, …). input_tokens is the total,
// cache reads and writes included.
type Usage map[string]float64

// Options say where a call went and when.
type Options struct {
	ProviderID string    // a provider id or name, e.g. gen_ai.provider.name
	APIURL     string    // the API base URL, used without ProviderID
	Time       time.Time // when the call was made; zero is now
}

// Result is the price of one call in US dollars.
type Result struct {
	InputPrice, OutputPrice, TotalPrice float64
	Provider                            *Provider
	Model                               *Model
}

// Table is the loaded price data. It is safe for concurrent use.
type Table struct {
	Providers []*Provider // sorted by id, as the refresh writes them
	// Source names the data: "genai-prices@<version>".
	Source string

	byID      map[string]*Provider
	compiled  map[*ModelPrice]*priceSet
	byModelID map[string]resolution // lower-cased model id → its first provider, see Resolve

	mu       sync.RWMutex
	resolved map[Span]resolution // see Resolve
}

var (
	defaultOnce  sync.Once
	defaultTable *Table
	defaultErr   error
)

// Default is the embedded table, loaded once.
func Default() (*Table, error) {
	defaultOnce.Do(func() {
		defaultTable, defaultErr = Load(embedded)
		if defaultErr == nil {
			defaultTable.Source = "genai-prices@" + sourceVersion(sourceFile)
		}
	})
	return defaultTable, defaultErr
}

func sourceVersion(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(line, "version:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// Load reads price data (the JSON array of providers). Anything the
// pricing rules do not know (a price key, a constraint type, a regex RE2
// cannot run) is an error: pricing around it would silently under-price.
func Load(data []byte) (*Table, error) {
	var ps []*Provider
	if err := json.Unmarshal(data, &ps); err != nil {
		return nil, fmt.Errorf("price data: %w", err)
	}
	t := &Table{Providers: ps, byID: map[string]*Provider{}, compiled: map[*ModelPrice]*priceSet{}}
	for _, p := range ps {
		t.byID[p.ID] = p
	}
	for _, p := range ps {
		if err := t.prepare(p); err != nil {
			return nil, fmt.Errorf("price data, provider %s: %w", p.ID, err)
		}
	}
	// Providers with a model_match (the model makers' own catalogs) come
	// before resellers and routers for a model id several of them list.
	t.byModelID = map[string]resolution{}
	for _, first := range []bool{true, false} {
		for _, p := range ps {
			if (p.ModelMatch != nil) != first {
				continue
			}
			for _, m := range p.Models {
				if id := strings.ToLower(m.ID); t.byModelID[id].m == nil {
					t.byModelID[id] = resolution{p, m}
				}
			}
		}
	}
	return t, nil
}

func (t *Table) prepare(p *Provider) error {
	re, err := regexp.Compile("^(?:" + p.APIPattern + ")")
	if err != nil {
		return fmt.Errorf("api_pattern: %w", err)
	}
	p.api = re
	p.idValue = p.ID
	for _, m := range []*Match{p.ProviderMatch, p.ModelMatch} {
		if m != nil {
			if err := m.compile(); err != nil {
				return err
			}
		}
	}
	for _, id := range p.FallbackModelProviders {
		if f := t.byID[id]; f != nil {
			p.fallbacks = append(p.fallbacks, f)
		}
	}
	for _, m := range p.Models {
		m.idValue = m.ID
		if m.Match == nil {
			return fmt.Errorf("model %s: no match", m.ID)
		}
		if err := m.Match.compile(); err != nil {
			return fmt.Errorf("model %s: %w", m.ID, err)
		}
		if len(m.Prices.List) == 0 {
			return fmt.Errorf("model %s: no prices", m.ID)
		}
		for i := range m.Prices.List {
			cp := &m.Prices.List[i]
			if cp.Constraint != nil {
				if err := cp.Constraint.compile(); err != nil {
					return fmt.Errorf("model %s: %w", m.ID, err)
				}
			}
			set, err := compilePrices(cp.Prices)
			if err != nil {
				return fmt.Errorf("model %s: %w", m.ID, err)
			}
			t.compiled[&cp.Prices] = set
		}
	}
	return nil
}

// FindProvider is the provider for a provider id or name, else for the API
// URL, else for the model id, as the compatible platform's findProvider: an id or
// name that fits no provider finds none (except "litellm", which goes on).
func (t *Table) FindProvider(o Options, model string) *Provider {
	if o.ProviderID != "" {
		if p := t.providerByName(o.ProviderID); p != nil || !strings.EqualFold(o.ProviderID, "litellm") {
			return p
		}
	}
	if o.APIURL != "" {
		return t.providerByURL(o.APIURL)
	}
	if model != "" {
		return t.providerByModel(strings.ToLower(model))
	}
	return nil
}

func (t *Table) providerByName(name string) *Provider {
	name = strings.TrimSpace(strings.ToLower(name))
	if p := t.byID[name]; p != nil {
		return p
	}
	for _, p := range t.Providers {
		if p.ProviderMatch != nil && p.ProviderMatch.matches(name) {
			return p
		}
	}
	return nil
}

func (t *Table) providerByURL(url string) *Provider {
	for _, p := range t.Providers {
		if p.api.MatchString(url) {
			return p
		}
	}
	return nil
}

// providerByModel takes a lower-cased model id.
func (t *Table) providerByModel(model string) *Provider {
	for _, p := range t.Providers {
		if p.ModelMatch != nil && p.ModelMatch.matches(model) {
			return p
		}
	}
	return nil
}

// FindModel is the model of p that the (lower-cased) model id names: the
// first whose match fits, else the same search in each of p's fallback
// providers, else all of it again with compact date suffixes rewritten
// ("-20250514" → "-2025-05-14").
func (p *Provider) FindModel(model string) *Model {
	if m := p.findModel(model, true); m != nil {
		return m
	}
	if r := rewriteDates(model); r != model {
		return p.findModel(r, true)
	}
	return nil
}

func (p *Provider) findModel(model string, fallbacks bool) *Model {
	for _, m := range p.Models {
		if m.Match.matches(model) {
			return m
		}
	}
	if fallbacks {
		for _, f := range p.fallbacks {
			if m := f.findModel(model, false); m != nil {
				return m
			}
		}
	}
	return nil
}

// rewriteDates turns each "-YYYYMMDD" (a valid date of the 2000s, followed
// by "-", ":" or the end) into "-YYYY-MM-DD".
func rewriteDates(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i+9 <= len(s); i++ {
		if s[i] != '-' || s[i+1] != '2' || s[i+2] != '0' || !digits(s[i+3:i+9]) {
			continue
		}
		if i+9 < len(s) && s[i+9] != '-' && s[i+9] != ':' {
			continue
		}
		y, mo, d := atoi(s[i+1:i+5]), atoi(s[i+5:i+7]), atoi(s[i+7:i+9])
		if mo < 1 || mo > 12 || d < 1 || d > 31 {
			continue
		}
		if dt := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC); dt.Day() != d || int(dt.Month()) != mo {
			i += 8 // the compatible platform's global regex resumes after a match it leaves unchanged
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString("-" + s[i+1:i+5] + "-" + s[i+5:i+7] + "-" + s[i+7:i+9])
		last = i + 9
		i += 8
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// Calc prices one call as the compatible platform's calcPrice does; ok is false
// when no provider or model fits. An error means usage the rules cannot
// price (a part larger than its whole, e.g. more cache reads than input).
func (t *Table) Calc(u Usage, model string, o Options) (r Result, ok bool, err error) {
	model = strings.TrimSpace(strings.ToLower(model))
	pid := o.ProviderID
	if strings.EqualFold(pid, "litellm") {
		if i := strings.IndexByte(model, '/'); i > 0 && i < len(model)-1 && t.providerByName(model[:i]) != nil {
			pid, model = model[:i], model[i+1:]
		}
	}
	o.ProviderID = pid
	p := t.FindProvider(o, model)
	if p == nil {
		return Result{}, false, nil
	}
	m := p.FindModel(model)
	if m == nil {
		return Result{}, false, nil
	}
	return t.Price(u, p, m, o.Time)
}

// Price is the price of one call to model m of provider p at time at
// (zero: now).
func (t *Table) Price(u Usage, p *Provider, m *Model, at time.Time) (Result, bool, error) {
	if at.IsZero() {
		at = time.Now()
	}
	set := t.compiled[m.pricesAt(at)]
	in, out, total, err := set.price(u)
	if err != nil {
		return Result{}, false, fmt.Errorf("%s/%s: %w", p.ID, m.ID, err)
	}
	return Result{InputPrice: in, OutputPrice: out, TotalPrice: total, Provider: p, Model: m}, true, nil
}

// pricesAt scans the dated list from the end: the first entry whose
// constraint holds wins; without any, the first entry.
func (m *Model) pricesAt(at time.Time) *ModelPrice {
	l := m.Prices.List
	if !m.Prices.IsArray {
		return &l[0].Prices
	}
	for i := len(l) - 1; i >= 0; i-- {
		if c := l[i].Constraint; c == nil || c.holds(at) {
			return &l[i].Prices
		}
	}
	return &l[0].Prices
}

// priceSet is a ModelPrice compiled for pricing: its units ordered from
// the most specific (most dimensions) to the least, each with the indices
// of its priced parts, so that each unit is priced on what its parts leave.
type priceSet struct {
	entries  []pricedUnit // in the data's key order (the order of the sums)
	order    []int        // indices into entries, most specific first; requests left out
	tiered   bool
	requests int // index of requests_kcount in entries, or -1
}

type pricedUnit struct {
	unit  *unit
	value PriceValue
	parts []int // indices into entries of the priced units below this one
	dir   byte  // 'i' input, 'o' output, 0 neither
}

func compilePrices(mp ModelPrice) (*priceSet, error) {
	s := &priceSet{requests: -1}
	var unknown []string
	for _, e := range mp {
		u := unitsByPriceKey[e.Key]
		if u == nil {
			unknown = append(unknown, e.Key)
			continue
		}
		pu := pricedUnit{unit: u, value: e.Value}
		switch u.dims["direction"] {
		case "input":
			pu.dir = 'i'
		case "output":
			pu.dir = 'o'
		}
		if e.Value.Tiers != nil {
			s.tiered = true
		}
		s.entries = append(s.entries, pu)
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("unknown price keys %s", strings.Join(unknown, ", "))
	}
	keys := map[string]bool{}
	for _, e := range s.entries {
		keys[e.unit.priceKey] = true
	}
	for i := range s.entries {
		e := &s.entries[i]
		if e.unit.usageKey == "requests" {
			s.requests = i
			continue
		}
		s.order = append(s.order, i)
		for _, a := range ancestors[e.unit.usageKey] {
			if !keys[a.priceKey] {
				return nil, fmt.Errorf("price %s without the price %s it is a part of", e.unit.priceKey, a.priceKey)
			}
		}
		for j := range s.entries {
			o := &s.entries[j]
			if j != i && o.unit.usageKey != "requests" && o.unit.within(e.unit) {
				e.parts = append(e.parts, j)
			}
			if j > i && compatible(e.unit, o.unit) {
				join := joinOf(e.unit, o.unit)
				if join == nil || !keys[join.priceKey] {
					return nil, fmt.Errorf("prices %s and %s overlap without a price for their overlap", e.unit.priceKey, o.unit.priceKey)
				}
			}
		}
	}
	sort.SliceStable(s.order, func(a, b int) bool {
		ua, ub := s.entries[s.order[a]].unit, s.entries[s.order[b]].unit
		if len(ua.dims) != len(ub.dims) {
			return len(ua.dims) > len(ub.dims)
		}
		return ua.usageKey < ub.usageKey
	})
	return s, nil
}

// price is the input, output and total price of usage u.
func (s *priceSet) price(u Usage) (in, out, total float64, err error) {
	var buf [16]float64
	leaf := buf[:0]
	if len(s.entries) <= len(buf) {
		leaf = buf[:len(s.entries)]
	} else {
		leaf = make([]float64, len(s.entries))
	}
	n := float64(len(s.order) + 1)
	for _, i := range s.order {
		e := &s.entries[i]
		v := u[e.unit.usageKey]
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, 0, 0, fmt.Errorf("usage %s: %v is not a finite non-negative number", e.unit.usageKey, v)
		}
		var sum float64
		for _, j := range e.parts {
			sum += leaf[j]
		}
		r := v - sum
		if r < 0 && -r <= 0x1p-52*max(1, math.Abs(v), math.Abs(sum))*n {
			r = 0
		}
		if r < 0 {
			return 0, 0, 0, fmt.Errorf("usage: the parts of %s (%v) exceed it (%v)", e.unit.usageKey, sum, v)
		}
		leaf[i] = r
	}
	if s.requests >= 0 {
		leaf[s.requests] = 1
	}
	var inputTotal float64
	if s.tiered {
		inputTotal = u["input_tokens"]
	}
	var other float64
	for i := range s.entries {
		e := &s.entries[i]
		q := leaf[i]
		var c float64
		if e.value.Tiers == nil {
			c = e.value.Base * q / e.unit.per
		} else if q > 0 {
			p := e.value.Base
			for _, t := range e.value.Tiers {
				if inputTotal > t.Start {
					p = t.Price
				}
			}
			c = p * q / 1e6 * 1e6 / e.unit.per
		}
		switch e.dir {
		case 'i':
			in += c
		case 'o':
			out += c
		default:
			other += c
		}
	}
	return in, out, in + out + other, nil
}

var (
	unitsByPriceKey = map[string]*unit{}
	unitsByDims     = map[string]*unit{}
	// ancestors are, per usage key, the units it is a part of.
	ancestors = map[string][]*unit{}
)

func init() {
	for i := range unitList {
		u := &unitList[i]
		unitsByPriceKey[u.priceKey] = u
		unitsByDims[dimsKey(u.dims)] = u
	}
	for i := range unitList {
		u := &unitList[i]
		for j := range unitList {
			if a := &unitList[j]; a != u && u.within(a) {
				ancestors[u.usageKey] = append(ancestors[u.usageKey], a)
			}
		}
	}
}

// within reports whether u is a part of a (or a itself): u has every
// dimension of a, with a's value.
func (u *unit) within(a *unit) bool {
	for k, v := range a.dims {
		if u.dims[k] != v {
			return false
		}
	}
	return true
}

// compatible reports whether two units can overlap: no dimension of one
// has another value in the other.
func compatible(a, b *unit) bool {
	for k, v := range a.dims {
		if w, ok := b.dims[k]; ok && w != v {
			return false
		}
	}
	return true
}

// joinOf is the unit of a's and b's overlap (their dimensions together).
func joinOf(a, b *unit) *unit {
	d := map[string]string{}
	for k, v := range a.dims {
		d[k] = v
	}
	for k, v := range b.dims {
		d[k] = v
	}
	return unitsByDims[dimsKey(d)]
}

func dimsKey(d map[string]string) string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + d[k] + ";")
	}
	return b.String()
}
