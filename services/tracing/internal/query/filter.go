// Package query answers span and trace queries from ClickHouse: the filter
// language compiled to SQL, windowing and cursors, and the response shapes
// (flat spans, trace trees).
package query

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/spanmodel"
)

// Filtering is a tree of conditions, the compatible platform's filter
// language.
type Filtering struct {
	Operator   string `json:"operator,omitempty"`
	Conditions []json.RawMessage
}

// Condition compares one field (or attribute key) with a value.
type Condition struct {
	Field    string         `json:"field"`
	Key      string         `json:"key,omitempty"`
	Value    any            `json:"value,omitempty"`
	Operator string         `json:"operator,omitempty"`
	Options  map[string]any `json:"options,omitempty"`
}

// Operator families.
var (
	comparison = []string{"is", "is_not"}
	numeric    = []string{"eq", "neq", "gt", "lt", "gte", "lte", "btwn"}
	stringOps  = []string{"startswith", "endswith", "contains", "matches", "like"}
	listOps    = []string{"in", "not_in"}
	dictOps    = []string{"has", "has_not"}
	existence  = []string{"exists", "not_exists"}
)

func ops(families ...[]string) map[string]bool {
	m := map[string]bool{}
	for _, f := range families {
		for _, o := range f {
			m[o] = true
		}
	}
	return m
}

type fieldSpec struct {
	column string
	ops    map[string]bool
	kind   string // id, span_id, enum, text, time, attributes, array, content
	enum   []string
}

var fields = map[string]fieldSpec{
	"trace_id":       {column: "trace_id", ops: ops(comparison, listOps), kind: "trace_id"},
	"span_id":        {column: "span_id", ops: ops(comparison, listOps), kind: "span_id"},
	"parent_id":      {column: "parent_id", ops: ops(comparison, listOps), kind: "span_id"},
	"trace_type":     {column: "trace_type", ops: ops(comparison, listOps), kind: "enum", enum: spanmodel.TraceTypes},
	"span_type":      {column: "span_type", ops: ops(comparison, listOps), kind: "enum", enum: spanmodel.SpanTypes},
	"span_kind":      {column: "span_kind", ops: ops(comparison, listOps), kind: "enum", enum: spanmodel.SpanKinds},
	"status_code":    {column: "status_code", ops: ops(comparison, listOps), kind: "enum", enum: spanmodel.StatusCodes},
	"span_name":      {column: "span_name", ops: ops(comparison, numeric, stringOps, listOps, existence), kind: "text"},
	"status_message": {column: "status_message", ops: ops(comparison, numeric, stringOps, listOps, existence), kind: "text"},
	"session_id":     {column: "session_id", ops: ops(comparison, numeric, stringOps, listOps, existence), kind: "text"},
	"user_id":        {column: "user_id", ops: ops(comparison, numeric, stringOps, listOps, existence), kind: "text"},
	"agent_id":       {column: "agent_id", ops: ops(comparison, numeric, stringOps, listOps, existence), kind: "text"},
	"start_time":     {column: "start_us", ops: ops(comparison, numeric, listOps), kind: "time"},
	"end_time":       {column: "end_us", ops: ops(comparison, numeric, listOps), kind: "time"},
	"created_at":     {column: "created_us", ops: ops(comparison, numeric, listOps), kind: "time"},
	"created_by_id":  {column: "created_by_id", ops: ops(comparison, listOps, existence), kind: "text"},
	"attributes":     {ops: ops(comparison, numeric, stringOps, listOps, dictOps, existence), kind: "attributes"},
	"references":     {ops: ops(listOps, dictOps, existence), kind: "references"},
	"links":          {ops: ops(listOps, dictOps, existence), kind: "links"},
	"events":         {ops: ops(listOps, dictOps, existence), kind: "events"},
	"hashes":         {ops: ops(listOps, dictOps, existence), kind: "hashes"},
	"content":        {ops: ops([]string{"contains"}), kind: "content"},
}

// Compiled is a WHERE clause with its positional arguments.
type Compiled struct {
	SQL  string
	Args []any
	// Rollup is set when the SQL reads cumulative metrics: the spans must
	// be joined with the query-time roll-up (rollupJoin).
	Rollup bool
}

type compiler struct {
	args   []any
	rollup bool
	lim    FilterLimits
	// What the filter has used of its limits so far.
	conditions, values, bytes int
	// interned names each string argument's alias (arg); aliasPrefix keeps
	// two compilers' aliases apart in one statement (default "_f").
	interned    map[string]string
	aliasPrefix string
}

// arg is the placeholder of v. A string is written into the statement once:
// its first use is "(? AS _f<n>)" and later uses name the alias, so the
// SQL text grows with the filter's distinct texts, not with how often the
// SQL repeats them (a key is read four times to resolve a pointer), and
// the filter limits bound it. ClickHouse aliases are global to the
// statement and stand for their expression (a constant here) wherever
// they are named, lambdas included.
func (c *compiler) arg(v any) string {
	s, ok := v.(string)
	if !ok {
		c.args = append(c.args, v)
		return "?"
	}
	if name, ok := c.interned[s]; ok {
		return name
	}
	if c.interned == nil {
		c.interned = map[string]string{}
	}
	prefix := c.aliasPrefix
	if prefix == "" {
		prefix = "_f"
	}
	name := prefix + strconv.Itoa(len(c.interned)+1)
	c.interned[s] = name
	c.args = append(c.args, s)
	return "(? AS " + name + ")"
}

// Compile turns a filtering tree into SQL over the spans table. An invalid
// tree, field, operator or value is a 400 whose detail names the condition
// by its path (filtering.conditions[1].conditions[0]); so is a tree over
// one of lim, which is checked here, before any SQL is built, and nowhere
// else.
func Compile(raw json.RawMessage, path string, lim FilterLimits) (Compiled, error) {
	c := &compiler{lim: lim}
	if len(raw) == 0 || string(raw) == "null" {
		return Compiled{SQL: "1"}, nil
	}
	sql, err := c.node(raw, path, 1)
	if err != nil {
		return Compiled{}, err
	}
	return Compiled{SQL: sql, Args: c.args, Rollup: c.rollup}, nil
}

func invalid(path, format string, a ...any) error {
	msg := path + ": " + fmt.Sprintf(format, a...)
	return errs.WithDetail(errs.Invalid, "tracing.invalid_filter", msg, msg)
}

// overLimit is the 400 of a filter over one of its limits.
func overLimit(path, what string, got, limit int, name string) error {
	msg := fmt.Sprintf("%s: %s %d is over the limit of %d (%s)", path, what, got, limit, name)
	return errs.WithDetail(errs.Invalid, "tracing.filter_too_large", msg, msg)
}

// node compiles the group or condition raw at nesting depth (the root is 1).
// Every level decodes its own subtree again, so the depth limit also keeps
// that work linear.
func (c *compiler) node(raw json.RawMessage, path string, depth int) (string, error) {
	if depth > c.lim.MaxDepth {
		return "", overLimit(path, "nesting depth", depth, c.lim.MaxDepth, "TRACING_QUERY_FILTER_MAX_DEPTH")
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		return "", invalid(path, "must be an object")
	}
	_, leaf := probe["field"]
	if leaf || depth > 1 {
		// Every condition and group counts, but the root group.
		if err := c.one(path); err != nil {
			return "", err
		}
	}
	if leaf {
		var cond Condition
		if err := json.Unmarshal(raw, &cond); err != nil {
			return "", invalid(path, "malformed condition: %v", err)
		}
		return c.condition(cond, path)
	}
	for k := range probe {
		if k != "operator" && k != "conditions" {
			return "", invalid(path, "unknown key %q (a condition needs \"field\"; a group has \"operator\" and \"conditions\")", k)
		}
	}
	var f struct {
		Operator   string            `json:"operator"`
		Conditions []json.RawMessage `json:"conditions"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return "", invalid(path, "malformed filtering: %v", err)
	}
	op := f.Operator
	if op == "" {
		op = "and"
	}
	parts := make([]string, 0, len(f.Conditions))
	for i, sub := range f.Conditions {
		s, err := c.node(sub, fmt.Sprintf("%s.conditions[%d]", path, i), depth+1)
		if err != nil {
			return "", err
		}
		parts = append(parts, "("+s+")")
	}
	switch op {
	case "and":
		return join(parts, " AND ", "1"), nil
	case "or":
		return join(parts, " OR ", "0"), nil
	case "nand":
		return "NOT (" + join(parts, " AND ", "1") + ")", nil
	case "nor":
		return "NOT (" + join(parts, " OR ", "0") + ")", nil
	case "not":
		if len(parts) != 1 {
			return "", invalid(path, "operator \"not\" needs exactly one condition, got %d", len(parts))
		}
		return "NOT " + parts[0], nil
	}
	return "", invalid(path, "operator %q is not one of and, or, not, nand, nor", op)
}

func join(parts []string, sep, empty string) string {
	if len(parts) == 0 {
		return empty
	}
	return strings.Join(parts, sep)
}

// count charges a condition's key and value to the filter's limits.
func (c *compiler) count(cond Condition, path string) error {
	if err := c.key(cond.Key, path+".key"); err != nil {
		return err
	}
	return c.value(cond.Value, path+".value", 1)
}

// one charges one condition or group (or analytics metric spec).
func (c *compiler) one(path string) error {
	c.conditions++
	if c.conditions > c.lim.MaxConditions {
		return overLimit(path, "condition count", c.conditions, c.lim.MaxConditions, "TRACING_QUERY_FILTER_MAX_CONDITIONS")
	}
	return nil
}

// value charges every leaf of v (each list element and object leaf).
func (c *compiler) value(v any, path string, depth int) error {
	if depth > c.lim.MaxDepth {
		return overLimit(path, "nesting depth", depth, c.lim.MaxDepth, "TRACING_QUERY_FILTER_MAX_DEPTH")
	}
	switch t := v.(type) {
	case []any:
		for i, e := range t {
			if err := c.value(e, fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		for k, e := range t {
			if err := c.text(k, path); err != nil {
				return err
			}
			if err := c.value(e, path+"."+k, depth+1); err != nil {
				return err
			}
		}
		return nil
	case nil:
		return nil
	}
	c.values++
	if c.values > c.lim.MaxValues {
		return overLimit(path, "value count", c.values, c.lim.MaxValues, "TRACING_QUERY_FILTER_MAX_VALUES")
	}
	return c.text(spanmodel.LeafText(v), path)
}

// key charges an attribute key (or a metric spec's path).
func (c *compiler) key(s, path string) error {
	if len(s) > c.lim.MaxKeyBytes {
		return overLimit(path, "key length in bytes", len(s), c.lim.MaxKeyBytes, "TRACING_QUERY_FILTER_MAX_KEY_BYTES")
	}
	return c.text(s, path)
}

// text charges the bytes of a key or a value's text.
func (c *compiler) text(s, path string) error {
	if len(s) > c.lim.MaxValueBytes {
		return overLimit(path, "length in bytes", len(s), c.lim.MaxValueBytes, "TRACING_QUERY_FILTER_MAX_VALUE_BYTES")
	}
	c.bytes += len(s)
	if c.bytes > c.lim.MaxBytes {
		return overLimit(path, "filter size in bytes", c.bytes, c.lim.MaxBytes, "TRACING_QUERY_FILTER_MAX_BYTES")
	}
	return nil
}

func (c *compiler) condition(cond Condition, path string) (string, error) {
	if err := c.count(cond, path); err != nil {
		return "", err
	}
	spec, ok := fields[cond.Field]
	if !ok {
		return "", invalid(path, "unknown field %q", cond.Field)
	}
	op := cond.Operator
	if op == "" {
		op = "is"
	}
	if !spec.ops[op] {
		return "", invalid(path, "operator %q is not valid for field %q", op, cond.Field)
	}
	switch spec.kind {
	case "attributes":
		if cond.Key == "" {
			return "", invalid(path, "field \"attributes\" needs a key")
		}
		return c.attribute(cond, op, path)
	case "references", "links", "events", "hashes":
		return c.array(spec.kind, cond, op, path)
	case "content":
		s, ok := cond.Value.(string)
		if !ok || s == "" {
			return "", invalid(path, "content contains needs a non-empty string value")
		}
		// A long text is kept in attr_values only, the JSON holds a
		// pointer to it (chspans.LongLeaf): the texts longer than that
		// are searched too (a pointer is shorter), in a lambda that reads
		// its own array only (see elementsIn).
		a1 := c.arg(s)
		a2 := c.arg(s)
		long := fmt.Sprintf("arrayExists(x -> length(x) > %d AND positionCaseInsensitiveUTF8(x, %s) > 0, attr_values)", chspans.LongLeaf, a2)
		return "(positionCaseInsensitiveUTF8(attributes, " + a1 + ") > 0 OR " + long + " OR positionCaseInsensitiveUTF8(events, " + c.arg(s) + ") > 0)", nil
	}
	col := spec.column
	conv := func(v any) (any, error) { return v, nil }
	switch spec.kind {
	case "trace_id":
		conv = func(v any) (any, error) { return spanmodel.TraceID(fmt.Sprint(v)) }
	case "span_id":
		conv = func(v any) (any, error) {
			if v == nil {
				return "", nil
			}
			return spanmodel.SpanID(fmt.Sprint(v))
		}
	case "enum":
		conv = func(v any) (any, error) {
			s := fmt.Sprint(v)
			if contains(spec.enum, s) {
				return s, nil
			}
			return nil, fmt.Errorf("value %q is not one of %s", s, strings.Join(spec.enum, ", "))
		}
	case "text":
		conv = func(v any) (any, error) {
			if v == nil {
				return "", nil
			}
			return spanmodel.LeafText(v), nil
		}
	case "time":
		conv = func(v any) (any, error) {
			if f, ok := v.(float64); ok {
				v = fmt.Sprintf("%.0f", f)
			}
			t, err := spanmodel.Time(v)
			if err != nil {
				return nil, err
			}
			return t.UnixMicro(), nil
		}
	}
	one := func() (any, error) {
		if cond.Value == nil && spec.kind != "span_id" && spec.kind != "text" && !strings.Contains(op, "exists") {
			return nil, fmt.Errorf("a value is required")
		}
		return conv(cond.Value)
	}
	switch op {
	case "exists":
		return col + " != ''", nil
	case "not_exists":
		return col + " = ''", nil
	case "is", "is_not", "eq", "neq":
		v, err := one()
		if err != nil {
			return "", invalid(path, "%v", err)
		}
		eq := "="
		if op == "is_not" || op == "neq" {
			eq = "!="
		}
		return col + " " + eq + " " + c.arg(v), nil
	case "gt", "lt", "gte", "lte":
		v, err := one()
		if err != nil {
			return "", invalid(path, "%v", err)
		}
		return col + " " + map[string]string{"gt": ">", "lt": "<", "gte": ">=", "lte": "<="}[op] + " " + c.arg(v), nil
	case "btwn":
		list, ok := cond.Value.([]any)
		if !ok || len(list) != 2 {
			return "", invalid(path, "btwn needs a [low, high] value")
		}
		lo, err := conv(list[0])
		if err != nil {
			return "", invalid(path, "%v", err)
		}
		hi, err := conv(list[1])
		if err != nil {
			return "", invalid(path, "%v", err)
		}
		return col + " >= " + c.arg(lo) + " AND " + col + " <= " + c.arg(hi), nil
	case "in", "not_in":
		list, ok := cond.Value.([]any)
		if !ok {
			return "", invalid(path, "%s needs a list value", op)
		}
		vals := make([]string, 0, len(list))
		var ints []int64
		for _, x := range list {
			v, err := conv(x)
			if err != nil {
				return "", invalid(path, "%v", err)
			}
			if i, ok := v.(int64); ok {
				ints = append(ints, i)
			} else {
				vals = append(vals, fmt.Sprint(v))
			}
		}
		// An empty list matches nothing, and binds no argument: every
		// placeholder must have its argument.
		expr := "0"
		switch {
		case len(list) == 0:
		case spec.kind == "time":
			expr = "has(" + c.arg(ints) + ", " + col + ")"
		default:
			expr = "has(" + c.arg(vals) + ", " + col + ")"
		}
		if op == "not_in" {
			return "NOT " + expr, nil
		}
		return expr, nil
	case "startswith", "endswith", "contains", "matches", "like":
		s, ok := cond.Value.(string)
		if !ok {
			return "", invalid(path, "%s needs a string value", op)
		}
		return c.textMatch(col, op, s, cond.Options), nil
	}
	return "", invalid(path, "operator %q is not valid for field %q", op, cond.Field)
}

func likeEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

func (c *compiler) textMatch(expr, op, s string, opts map[string]any) string {
	caseSensitive, _ := opts["case_sensitive"].(bool)
	exact, _ := opts["exact_match"].(bool)
	var pattern string
	switch op {
	case "startswith":
		pattern = likeEscape(s) + "%"
	case "endswith":
		pattern = "%" + likeEscape(s)
	case "contains":
		pattern = "%" + likeEscape(s) + "%"
	case "matches":
		if exact {
			if caseSensitive {
				return expr + " = " + c.arg(s)
			}
			return "lowerUTF8(" + expr + ") = lowerUTF8(" + c.arg(s) + ")"
		}
		pattern = "%" + likeEscape(s) + "%"
	case "like":
		pattern = s
	}
	if caseSensitive {
		return expr + " LIKE " + c.arg(pattern)
	}
	// ClickHouse 18.16 has no ILIKE.
	return "lowerUTF8(" + expr + ") LIKE lowerUTF8(" + c.arg(pattern) + ")"
}

// resolved is the attr_values element v with a pointer (chspans.PointerMark
// + index: a long leaf is stored once per span) replaced by the text it
// points to. v is called once per use, in order, so that its placeholders
// match the arguments.
func resolved(v func() string) string {
	s := "if(startsWith(" + v() + ", '\\xEF\\xBF\\xBF\\x00')"
	s += " AND length(" + v() + ") < 16"
	s += ", attr_values[toUInt32OrZero(substring(" + v() + ", 5))]"
	return s + ", " + v() + ")"
}

var reSpecial = regexp.MustCompile(`[\\.+*?()|\[\]{}^$]`)

// elementsOf is the SQL of the stored texts of the list at key: the leaves
// key.0, key.1, ... (pointers unresolved).
func (c *compiler) elementsOf(key string) string {
	re := "^" + reSpecial.ReplaceAllStringFunc(key, func(s string) string { return `\` + s }) + `\.[0-9]+$`
	return "arrayFilter((x, k) -> match(k, " + c.arg(re) + "), attr_values, attr_keys)"
}

// pointerTargets is the SQL of the indexes (in attr_values) that the
// pointers among the texts els name.
func pointerTargets(els string) string {
	return "arrayFilter(i -> i != 0, arrayMap(x -> if(startsWith(x, '\\xEF\\xBF\\xBF\\x00') AND length(x) < 16, toUInt32OrZero(substring(x, 5)), 0), " + els + "))"
}

// elementsIn is "the list at key has any (all) of values". Every lambda
// reads only its own arrays' elements and constants: a lambda that reads
// another column (attr_values, to resolve a pointer) gets that column
// copied once per element, memory in the square of the span's size, which
// for a span of 5,000 attributes asked ClickHouse for over 100 GiB, even
// for a query of another project whose rows shared a block with it.
//
// A text up to chspans.LongLeaf is never a pointer. A longer one may be
// stored as a pointer to its first copy, which is stored as text: an
// element matches it when it is the text, or a pointer to where the text
// is (a 1-based index into attr_values, found without reading another
// column in a lambda). The values make one expression where they can:
// ClickHouse 18.16 analyses a statement in time that grows faster than its
// expressions, so each further one (a long value that all of them must
// match) counts as a condition against the filter's limit.
func (c *compiler) elementsIn(key string, values []any, all bool, path string) (string, error) {
	var texts, short, long []string
	for _, v := range values {
		t := spanmodel.LeafText(v)
		texts = append(texts, t)
		if len(t) > chspans.LongLeaf {
			long = append(long, t)
		} else {
			short = append(short, t)
		}
	}
	if len(values) == 0 {
		return "0", nil
	}
	if !all {
		e := "hasAny(" + c.elementsOf(key) + ", " + c.arg(texts) + ")"
		if len(long) > 0 {
			at := "arrayFilter((i, x) -> has(" + c.arg(long) + ", x), arrayEnumerate(attr_values), attr_values)"
			e += " OR hasAny(" + pointerTargets(c.elementsOf(key)) + ", " + at + ")"
		}
		return e, nil
	}
	var parts []string
	if len(short) > 0 {
		parts = append(parts, "hasAll("+c.elementsOf(key)+", "+c.arg(short)+")")
	}
	for i, t := range long {
		if i > 0 || len(short) > 0 {
			if err := c.one(path); err != nil {
				return "", err
			}
		}
		parts = append(parts, "(has("+c.elementsOf(key)+", "+c.arg(t)+") OR has("+pointerTargets(c.elementsOf(key))+", indexOf(attr_values, "+c.arg(t)+")))")
	}
	return strings.Join(parts, " AND "), nil
}

// storedPairs is the SQL of a span's leaves as pair texts (pairText): many
// leaves of an object value are then tested in one hasAll.
const storedPairs = "arrayMap((k, v) -> concat(toString(length(k)), ':', k, v), attr_keys, attr_values)"

// pairText is a (key, text) leaf as one string; the key's length makes it
// unambiguous whatever the key and text hold.
func pairText(k, v string) string { return strconv.Itoa(len(k)) + ":" + k + v }

func (c *compiler) attribute(cond Condition, op, path string) (string, error) {
	key := cond.Key
	// Built on use: every placeholder must match an argument, in order.
	leafOf := func(k string) string {
		if _, leaf, ok := cumulativeKey(k); ok {
			c.rollup = true
			return leaf
		}
		return resolved(func() string { return "attr_values[indexOf(attr_keys, " + c.arg(k) + ")]" })
	}
	hasOf := func(k string) string {
		if has, _, ok := cumulativeKey(k); ok {
			c.rollup = true
			return has
		}
		return "has(attr_keys, " + c.arg(k) + ")"
	}
	// leafIs is "the leaf at k is the text v". A text up to LongLeaf is
	// never stored as a pointer, and no pointer equals it (stored texts
	// never start with PointerMark), so it is compared with the stored
	// text as it is: a few AST nodes, where resolving the pointer takes
	// thirty (and ClickHouse parses at most 50,000 per statement).
	leafIs := func(k, v string) string {
		if _, _, ok := cumulativeKey(k); !ok && len(v) <= chspans.LongLeaf && !strings.HasPrefix(v, chspans.PointerMark) {
			return "attr_values[indexOf(attr_keys, " + c.arg(k) + ")] = " + c.arg(v)
		}
		return leafOf(k) + " = " + c.arg(v)
	}
	leafExpr := func() string { return leafOf(key) }
	hasExpr := func() string { return hasOf(key) }
	switch op {
	case "exists", "not_exists":
		if has, _, ok := cumulativeKey(key); ok {
			c.rollup = true
			if op == "not_exists" {
				return "NOT " + has, nil
			}
			return has, nil
		}
		a1 := c.arg(key)
		e := "arrayExists(k -> k = " + a1 + " OR position(k, " + c.arg(key+".") + ") = 1, attr_keys)"
		if op == "not_exists" {
			return "NOT " + e, nil
		}
		return e, nil
	case "is", "is_not":
		var e string
		if m, ok := cond.Value.(map[string]any); ok {
			// Containment: every leaf of the value must be present. The
			// short ones are tested together as pairs (one expression);
			// a long one, or a rolled-up metric, alone, and counts as a
			// condition (see elementsIn).
			keys, values := spanmodel.Flatten(m)
			var pairs, parts []string
			for i, k := range keys {
				full := key + "." + k
				// Each leaf's full key is a text of its own in the SQL.
				if err := c.key(full, path+".value"); err != nil {
					return "", err
				}
				v := values[i]
				if _, _, cumulative := cumulativeKey(full); !cumulative && len(v) <= chspans.LongLeaf && !strings.HasPrefix(v, chspans.PointerMark) {
					pairs = append(pairs, pairText(full, v))
					continue
				}
				if len(parts) > 0 {
					if err := c.one(path); err != nil {
						return "", err
					}
				}
				parts = append(parts, leafIs(full, v)+" AND "+hasOf(full))
			}
			if len(pairs) > 0 {
				parts = append(parts, "hasAll("+storedPairs+", "+c.arg(pairs)+")")
			}
			e = join(parts, " AND ", "1")
		} else {
			h := hasExpr()
			e = h + " AND " + leafIs(key, spanmodel.LeafText(cond.Value))
		}
		if op == "is_not" {
			return "NOT (" + e + ")", nil
		}
		return e, nil
	case "eq", "neq", "gt", "lt", "gte", "lte":
		sym := map[string]string{"eq": "=", "neq": "!=", "gt": ">", "lt": "<", "gte": ">=", "lte": "<="}[op]
		if cond.Value == nil {
			return "", invalid(path, "%s needs a value", op)
		}
		h := hasExpr()
		if f, ok := cond.Value.(float64); ok {
			return h + " AND toFloat64OrZero(" + leafExpr() + ") " + sym + " " + c.arg(f), nil
		}
		switch op {
		case "eq":
			return h + " AND " + leafIs(key, spanmodel.LeafText(cond.Value)), nil
		case "neq":
			return h + " AND NOT (" + leafIs(key, spanmodel.LeafText(cond.Value)) + ")", nil
		}
		return h + " AND " + leafExpr() + " " + sym + " " + c.arg(spanmodel.LeafText(cond.Value)), nil
	case "btwn":
		list, ok := cond.Value.([]any)
		if !ok || len(list) != 2 {
			return "", invalid(path, "btwn needs a [low, high] value")
		}
		lo, lok := list[0].(float64)
		hi, hok := list[1].(float64)
		h := hasExpr()
		if lok && hok {
			l1 := leafExpr()
			a1 := c.arg(lo)
			l2 := leafExpr()
			return h + " AND toFloat64OrZero(" + l1 + ") >= " + a1 + " AND toFloat64OrZero(" + l2 + ") <= " + c.arg(hi), nil
		}
		l1 := leafExpr()
		a1 := c.arg(spanmodel.LeafText(list[0]))
		l2 := leafExpr()
		return h + " AND " + l1 + " >= " + a1 + " AND " + l2 + " <= " + c.arg(spanmodel.LeafText(list[1])), nil
	case "startswith", "endswith", "contains", "matches", "like":
		s, ok := cond.Value.(string)
		if !ok {
			return "", invalid(path, "%s needs a string value", op)
		}
		h := hasExpr()
		return h + " AND " + c.textMatch(leafExpr(), op, s, cond.Options), nil
	case "in", "not_in":
		list, ok := cond.Value.([]any)
		if !ok {
			return "", invalid(path, "%s needs a list value", op)
		}
		all, _ := cond.Options["all"].(bool)
		in, err := c.elementsIn(key, list, all, path)
		if err != nil {
			return "", err
		}
		e := "(" + in + ")"
		if op == "not_in" {
			return "NOT " + e, nil
		}
		return e, nil
	case "has", "has_not":
		// The compatible platform produces no clause for dict operators on attributes;
		// we read "has" as "the key exists".
		e := hasExpr()
		if op == "has_not" {
			return "NOT " + e, nil
		}
		return e, nil
	}
	return "", invalid(path, "operator %q is not valid for field \"attributes\"", op)
}

func (c *compiler) array(kind string, cond Condition, op, path string) (string, error) {
	nonEmpty := map[string]string{"references": "notEmpty(ref_keys)", "links": "notEmpty(link_trace_ids)",
		"events": "notEmpty(event_names)", "hashes": "notEmpty(hash_ids)"}[kind]
	switch op {
	case "exists":
		return nonEmpty, nil
	case "not_exists":
		return "NOT " + nonEmpty, nil
	case "has", "has_not":
		v := spanmodel.LeafText(cond.Value)
		var e string
		switch {
		case cond.Key == "attributes.key" && kind == "references":
			e = "has(ref_keys, " + c.arg(v) + ")"
		case cond.Key == "attributes.key" && kind == "links":
			e = "has(link_keys, " + c.arg(v) + ")"
		case cond.Key == "id" && kind == "hashes", cond.Key == "" && kind == "hashes":
			e = "has(hash_ids, " + c.arg(v) + ")"
		case cond.Key == "id" && kind == "references":
			e = "has(ref_ids, " + c.arg(v) + ")"
		case cond.Key == "slug" && kind == "references":
			e = "has(ref_slugs, " + c.arg(v) + ")"
		case (cond.Key == "name" || cond.Key == "") && kind == "events":
			e = "has(event_names, " + c.arg(v) + ")"
		case cond.Key == "trace_id" && kind == "links":
			e = "has(link_trace_ids, " + c.arg(v) + ")"
		default:
			return "", invalid(path, "key %q is not searchable on %s", cond.Key, kind)
		}
		if op == "has_not" {
			return "NOT " + e, nil
		}
		return e, nil
	}
	list, ok := cond.Value.([]any)
	if !ok {
		return "", invalid(path, "%s needs a list value", op)
	}
	all, _ := cond.Options["all"].(bool)
	var parts []string
	for i, item := range list {
		if i > 0 {
			// Each item is an expression of its own (see elementsIn).
			if err := c.one(fmt.Sprintf("%s.value[%d]", path, i)); err != nil {
				return "", err
			}
		}
		p, err := c.arrayItem(kind, item)
		if err != nil {
			return "", invalid(fmt.Sprintf("%s.value[%d]", path, i), "%v", err)
		}
		parts = append(parts, "("+p+")")
	}
	sep := " OR "
	if all {
		sep = " AND "
	}
	e := "(" + join(parts, sep, "0") + ")"
	if op == "not_in" {
		return "NOT " + e, nil
	}
	return e, nil
}

func (c *compiler) arrayItem(kind string, item any) (string, error) {
	if kind == "hashes" {
		if s, ok := item.(string); ok {
			return "has(hash_ids, " + c.arg(s) + ")", nil
		}
	}
	m, ok := item.(map[string]any)
	if !ok {
		return "", fmt.Errorf("must be an object")
	}
	str := func(k string) string {
		if v, ok := m[k]; ok && v != nil {
			return spanmodel.LeafText(v)
		}
		return ""
	}
	key := ""
	if a, ok := m["attributes"].(map[string]any); ok {
		key = str2(a["key"])
	}
	switch kind {
	case "references":
		var parts []string
		for _, fc := range [][2]string{{"id", "ref_ids"}, {"slug", "ref_slugs"}, {"version", "ref_versions"}} {
			field, col := fc[0], fc[1]
			v := str(field)
			if v == "" {
				continue
			}
			if field == "id" {
				if id, err := spanmodel.TraceID(v); err == nil {
					v = id[:8] + "-" + id[8:12] + "-" + id[12:16] + "-" + id[16:20] + "-" + id[20:]
				}
			}
			if key != "" {
				parts = append(parts, "arrayExists((k, x) -> k = "+c.arg(key)+" AND x = "+c.arg(v)+", ref_keys, "+col+")")
			} else {
				parts = append(parts, "has("+col+", "+c.arg(v)+")")
			}
		}
		if len(parts) == 0 {
			if key == "" {
				return "", fmt.Errorf("a reference needs id, slug, version or attributes.key")
			}
			return "has(ref_keys, " + c.arg(key) + ")", nil
		}
		return strings.Join(parts, " AND "), nil
	case "links":
		tid, err := spanmodel.TraceID(str("trace_id"))
		if err != nil {
			return "", err
		}
		if sid := str("span_id"); sid != "" {
			sid, err := spanmodel.SpanID(sid)
			if err != nil {
				return "", err
			}
			return "arrayExists((t, s) -> t = " + c.arg(tid) + " AND s = " + c.arg(sid) + ", link_trace_ids, link_span_ids)", nil
		}
		return "has(link_trace_ids, " + c.arg(tid) + ")", nil
	case "events":
		name := str("name")
		if name == "" {
			return "", fmt.Errorf("an event needs a name")
		}
		return "has(event_names, " + c.arg(name) + ")", nil
	case "hashes":
		id := str("id")
		if id == "" {
			return "", fmt.Errorf("a hash needs an id")
		}
		return "has(hash_ids, " + c.arg(id) + ")", nil
	}
	return "", fmt.Errorf("unsupported")
}

func str2(v any) string {
	if v == nil {
		return ""
	}
	return spanmodel.LeafText(v)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
