package prices

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Provider is one provider of the price data.
type Provider struct {
	ID                     string   `json:"id"`
	Name                   string   `json:"name"`
	APIPattern             string   `json:"api_pattern"`
	ProviderMatch          *Match   `json:"provider_match"`
	ModelMatch             *Match   `json:"model_match"`
	FallbackModelProviders []string `json:"fallback_model_providers"`
	Models                 []*Model `json:"models"`

	api       *regexp.Regexp
	fallbacks []*Provider
	idValue   any
}

// IDValue is ID as an interface value, made once: callers that store it in
// attribute maps on the ingest path need not box it per span.
func (p *Provider) IDValue() any { return p.idValue }

// IDValue is ID as an interface value, made once (see Provider.IDValue).
func (m *Model) IDValue() any { return m.idValue }

// Model is one model of a provider.
type Model struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	Match         *Match            `json:"match"`
	ContextWindow int               `json:"context_window"`
	Deprecated    bool              `json:"deprecated"`
	Prices        ConditionalPrices `json:"prices"`

	idValue any
}

// ConditionalPrices are a model's prices: the data gives either one price
// object (held here as a single entry without constraint) or a list of
// {constraint, prices}.
type ConditionalPrices struct {
	List    []ConditionalPrice
	IsArray bool // the data gave a list; its first entry is the fallback when no constraint holds
}

// ConditionalPrice is a price set that holds under its constraint (always,
// without one).
type ConditionalPrice struct {
	Constraint *Constraint `json:"constraint"`
	Prices     ModelPrice  `json:"prices"`
}

// Constraint limits a price set to requests from a start date on
// (type start_date) or to a daily UTC time window (type time_of_date,
// which may wrap midnight).
type Constraint struct {
	Type      string `json:"type"`
	StartDate string `json:"start_date"`
	StartTime string `json:"start_time"`
	EndTime   string `json:"end_time"`

	start            time.Time
	startSec, endSec float64
}

// ModelPrice is a price set in the data's key order: the order in which
// the compatible platform sums the parts, kept so that sums agree to the last bit.
type ModelPrice []PriceEntry

// PriceEntry is one price key (e.g. input_mtok) and its value.
type PriceEntry struct {
	Key   string
	Value PriceValue
}

// PriceValue is a flat price, or a base price with tiers chosen by the
// request's total input tokens.
type PriceValue struct {
	Base  float64
	Tiers []Tier // sorted by Start; nil for a flat price
}

// Tier is the price from Start input tokens on (exclusive).
type Tier struct {
	Start float64 `json:"start"`
	Price float64 `json:"price"`
}

// Match is the data's match logic: exactly one field is set. String tests
// are case-insensitive, regex is not.
type Match struct {
	Equals     *string  `json:"equals"`
	StartsWith *string  `json:"starts_with"`
	EndsWith   *string  `json:"ends_with"`
	Contains   *string  `json:"contains"`
	Regex      *string  `json:"regex"`
	Or         []*Match `json:"or"`
	And        []*Match `json:"and"`

	lower string    // the string test's operand, lower-cased once
	re    *jsRegexp // Regex, compiled once
	kind  byte      // which field is set
}

const (
	kindNone byte = iota
	kindEquals
	kindStartsWith
	kindEndsWith
	kindContains
	kindRegex
	kindOr
	kindAnd
)

func (c *ConditionalPrices) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		c.IsArray = true
		return json.Unmarshal(b, &c.List)
	}
	var p ModelPrice
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	c.List = []ConditionalPrice{{Prices: p}}
	return nil
}

func (m *ModelPrice) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("prices: want an object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		var v PriceValue
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("price %s: %w", key, err)
		}
		*m = append(*m, PriceEntry{Key: key, Value: v})
	}
	_, err := dec.Token()
	return err
}

func (v *PriceValue) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var t struct {
			Base  *float64 `json:"base"`
			Tiers []Tier   `json:"tiers"`
		}
		if err := json.Unmarshal(b, &t); err != nil {
			return err
		}
		if t.Base == nil || t.Tiers == nil {
			return fmt.Errorf("want a number or {base, tiers}")
		}
		v.Base, v.Tiers = *t.Base, t.Tiers
		sort.SliceStable(v.Tiers, func(i, j int) bool { return v.Tiers[i].Start < v.Tiers[j].Start })
		return nil
	}
	return json.Unmarshal(b, &v.Base)
}

// compile checks and prepares a match tree: string operands lower-cased,
// regexes compiled, exactly one test per node.
func (m *Match) compile() error {
	n := 0
	set := func(k byte) { m.kind = k; n++ }
	if m.Equals != nil {
		set(kindEquals)
		m.lower = strings.ToLower(*m.Equals)
	}
	if m.StartsWith != nil {
		set(kindStartsWith)
		m.lower = strings.ToLower(*m.StartsWith)
	}
	if m.EndsWith != nil {
		set(kindEndsWith)
		m.lower = strings.ToLower(*m.EndsWith)
	}
	if m.Contains != nil {
		set(kindContains)
		m.lower = strings.ToLower(*m.Contains)
	}
	if m.Regex != nil {
		set(kindRegex)
		re, err := compileJS(*m.Regex)
		if err != nil {
			return err
		}
		m.re = re
	}
	if m.Or != nil {
		set(kindOr)
	}
	if m.And != nil {
		set(kindAnd)
	}
	if n != 1 {
		return fmt.Errorf("match: want exactly one test, got %d", n)
	}
	for _, c := range append(m.Or, m.And...) {
		if c == nil {
			return fmt.Errorf("match: empty clause")
		}
		if err := c.compile(); err != nil {
			return err
		}
	}
	return nil
}

// matches reports whether lowered (the tested string, already lower-case)
// fits the tree.
func (m *Match) matches(lowered string) bool {
	switch m.kind {
	case kindEquals:
		return lowered == m.lower
	case kindStartsWith:
		return strings.HasPrefix(lowered, m.lower)
	case kindEndsWith:
		return strings.HasSuffix(lowered, m.lower)
	case kindContains:
		return strings.Contains(lowered, m.lower)
	case kindRegex:
		return m.re.MatchString(lowered)
	case kindOr:
		for _, c := range m.Or {
			if c.matches(lowered) {
				return true
			}
		}
		return false
	case kindAnd:
		for _, c := range m.And {
			if !c.matches(lowered) {
				return false
			}
		}
		return true
	}
	return false
}

// compile parses the constraint's date or times once.
func (c *Constraint) compile() error {
	if c.Type == "" { // the data's older untyped forms
		switch {
		case c.StartDate != "":
			c.Type = "start_date"
		case c.StartTime != "" || c.EndTime != "":
			c.Type = "time_of_date"
		}
	}
	switch c.Type {
	case "start_date":
		t, err := time.Parse("2006-01-02", c.StartDate)
		if err != nil {
			return fmt.Errorf("constraint start_date %q: %w", c.StartDate, err)
		}
		c.start = t
	case "time_of_date":
		var err error
		if c.startSec, err = timeOfDay(c.StartTime); err != nil {
			return err
		}
		if c.endSec, err = timeOfDay(c.EndTime); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown price constraint type %q", c.Type)
	}
	return nil
}

var timeOfDayRe = regexp.MustCompile(`^(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|([+-])(\d{2}):(\d{2}))$`)

// timeOfDay is an "HH:MM:SS[.frac](Z|±HH:MM)" time as seconds after UTC
// midnight.
func timeOfDay(s string) (float64, error) {
	m := timeOfDayRe.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("invalid time-of-day constraint %q", s)
	}
	var h, mi, sec, oh, om int
	fmt.Sscan(m[1], &h)
	fmt.Sscan(m[2], &mi)
	fmt.Sscan(m[3], &sec)
	if m[7] != "" {
		fmt.Sscan(m[7], &oh)
		fmt.Sscan(m[8], &om)
	}
	if h > 23 || mi > 59 || sec > 59 || oh > 23 || om > 59 {
		return 0, fmt.Errorf("invalid time-of-day constraint %q", s)
	}
	v := float64(h*3600 + mi*60 + sec)
	if m[4] != "" {
		var frac float64
		fmt.Sscan("0."+m[4], &frac)
		v += frac
	}
	off := float64((oh*60 + om) * 60)
	switch m[6] {
	case "+":
		v -= off
	case "-":
		v += off
	}
	return math.Mod(v+86400, 86400), nil
}

// holds reports whether the constraint holds at t.
func (c *Constraint) holds(t time.Time) bool {
	switch c.Type {
	case "start_date":
		return !t.Before(c.start)
	case "time_of_date":
		u := t.UTC()
		now := float64(u.Hour()*3600+u.Minute()*60+u.Second()) + float64(u.Nanosecond()/1e6)/1000
		if c.endSec < c.startSec { // wraps midnight
			return now >= c.startSec || now < c.endSec
		}
		return now >= c.startSec && now < c.endSec
	}
	return false
}
